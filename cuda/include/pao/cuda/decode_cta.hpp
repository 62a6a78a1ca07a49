// What one decode CTA of the CUDA kernels computes its work from, shared by host and device
// (PAO_HD, no CUDA headers): the token range of CTA (head, seq, partition), the partitions a
// reduce CTA merges, and the thread geometry as compile-time constants. The CPU tests check each
// against pao's plan (plan.hpp) and DecodeGeometry::make, the definitions the oracle uses.
#pragma once

#include <cstdint>

#include "pao/hd.hpp"

namespace pao::cuda {

/// The NVIDIA CTA the kernels are written for (and the oracle's KernelConfig defaults).
inline constexpr std::int32_t kWarpSize = 32;
inline constexpr std::int32_t kThreadsPerCta = 128;

/// Tokens [begin, end) of a sequence that one attention CTA owns. Empty when end <= begin.
struct CtaTokens {
  std::int32_t begin = 0;
  std::int32_t end = 0;
};

/// partition_size 0: V1 (one CTA walks the whole sequence). Otherwise V2 partition `partition`.
PAO_HD CtaTokens decode_cta_tokens(std::int32_t partition_size, std::int32_t partition,
                                   std::int32_t seq_len) {
  if (partition_size <= 0) return {0, seq_len};
  const std::int32_t begin = partition * partition_size;
  const std::int32_t end = begin + partition_size < seq_len ? begin + partition_size : seq_len;
  return {begin, end};
}

/// Partitions the reduce CTA of a sequence merges: ceil(seq_len / partition_size).
PAO_HD std::int32_t reduce_num_partitions(std::int32_t seq_len, std::int32_t partition_size) {
  return (seq_len + partition_size - 1) / partition_size;
}

/// DecodeGeometry::make (pao/decode_geometry.hpp) as a constant expression, for array sizes and
/// template arguments. The launcher refuses to run if the two ever disagree, and the CPU tests
/// compare them for every instantiated block size and dtype.
struct StaticDecodeGeometry {
  std::int32_t warp_size, num_threads, num_warps;
  std::int32_t thread_group_size, vec_size, dims_per_step;
  std::int32_t v_vec_size, v_vecs_per_row, rows_per_iter;
};

PAO_HD constexpr StaticDecodeGeometry static_decode_geometry(std::int32_t warp_size, std::int32_t num_threads,
                                                             std::int32_t block_size,
                                                             std::int32_t elem_bytes) {
  StaticDecodeGeometry g{};
  g.warp_size = warp_size;
  g.num_threads = num_threads;
  g.num_warps = num_threads / warp_size;
  g.thread_group_size = warp_size / block_size > 1 ? warp_size / block_size : 1;
  const std::int32_t vs = 16 / (g.thread_group_size * elem_bytes);
  g.vec_size = vs > 1 ? vs : 1;
  g.dims_per_step = g.thread_group_size * g.vec_size;
  g.v_vec_size = 16 / elem_bytes < block_size ? 16 / elem_bytes : block_size;
  g.v_vecs_per_row = block_size / g.v_vec_size;
  g.rows_per_iter = warp_size / g.v_vecs_per_row;
  return g;
}

}  // namespace pao::cuda

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

}  // namespace pao::cuda

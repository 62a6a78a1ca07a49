// Host side of a decode launch, in plain C++ (no CUDA headers, so the CPU tests run it): the
// checks of DecodeParams against the plan, the grids and shared memory taken from the plan
// (pao/plan/decode_plan.hpp; nothing here re-derives partitioning), and whether a cache layout allows
// vector loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "pao/cuda/decode_cta.hpp"
#include "pao/cuda/decode_params.hpp"
#include "pao/cuda/kernel_launch.hpp"
#include "pao/cuda/status.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/plan/decode_plan.hpp"

namespace pao::cuda {

/// Everything the CUDA launcher needs beyond DecodeParams.
struct DecodeLaunch {
  KernelVariant kernel = KernelVariant::v1;
  KernelLaunch attention;           // grid (num_heads, num_seqs, max_num_partitions), 128 threads
  KernelLaunch reduce;              // V2 only: grid (num_heads, num_seqs), 128 threads
  std::int32_t partition_size = 0;  // 0: V1 (a CTA owns its whole sequence)
  std::int32_t max_num_partitions = 1;
  /// Whether the caches allow loading a thread's K vector (vec_size dims) / V vector
  /// (v_vec_size tokens) with one aligned vector load; otherwise element by element through
  /// PagedCacheLayout::offset. Same values either way; only speed differs.
  bool key_vector_loads = false;
  bool value_vector_loads = false;
};

/// plan_decode for these params with the CUDA CTA (warp 32, 128 threads). `host_seq_lens` is a
/// host copy of params.seq_lens; max_seq_len 0 means the longest of them.
Status plan_decode_launch(KernelVariant kernel, const DecodeParams& params, std::int32_t max_seq_len,
                          std::int32_t partition_size, std::span<const std::int32_t> host_seq_lens,
                          DecodePlan& plan);

/// Checks params against the plan (shapes, supported head size / block size / dtypes, pointers,
/// scalars, grid limits) and sizes the launch from the plan.
Status make_decode_launch(const DecodeParams& params, const DecodePlan& plan, DecodeLaunch& launch);

/// n consecutive dims starting at any multiple of n are contiguous and n-element aligned, for
/// every (block, head, token) of the layout, given the cache's base address.
bool dims_vectorizable(const PagedCacheLayout& layout, std::int32_t n, const void* base,
                       std::size_t elem_bytes);
/// Likewise for n consecutive tokens (starting at a multiple of n) of one dim.
bool tokens_vectorizable(const PagedCacheLayout& layout, std::int32_t n, const void* base,
                         std::size_t elem_bytes);

}  // namespace pao::cuda

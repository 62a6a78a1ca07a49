// V2's reduce for one (sequence, head): merge `num_partitions` partial results with
// log-sum-exp rescaling.
#pragma once

#include <cstdint>

#include "pao/kernels/attention_options.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/plan/kernel_tuning.hpp"

namespace pao::detail {

/// The kernel precision's thread geometry rules, shared by V1, V2 and the standalone reduce:
/// warp_size 32 or 64, threads_per_cta a power-of-two number of warps. Throws pao::Error
/// ("kernel precision: ...").
void check_kernel_geometry(const KernelTuning& tuning);

/// Exact: M = max of the partitions' max logits, w_j = exp_sum_j * exp(max_j - M),
/// out = sum_j w_j tmp_j / sum_j w_j (0 when every weight is 0). tmp: [num_partitions][hs].
void reduce_exact(const double* tmp, const double* max_logits, const double* exp_sums,
                  std::int32_t num_partitions, std::int32_t head_size, double* out);

/// Kernel precision: vLLM's paged_attention_v2_reduce_kernel (one partition: a copy).
void reduce_kernel(const DecodeGeometry& geo, const float* tmp, const float* max_logits,
                   const float* exp_sums, std::int32_t num_partitions, std::int32_t head_size, float* out);

}  // namespace pao::detail

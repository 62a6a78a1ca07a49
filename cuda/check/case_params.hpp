// The launch parameters of a test case: layouts, strides and scalars taken from a cases::DecodeCase /
// cases::PrefixCase and its options, pointers at the case's own host tensors. The GPU harness swaps the
// pointers for device copies; the CPU emulation uses them as they are. Plain C++.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/filled_case.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cuda/decode_params.hpp"
#include "pao/cuda/prefix_params.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/plan/kernel_variant.hpp"

namespace pao::cuda::check {

/// The cache scales and attention scalars of `options` (default scale resolved as the CPU
/// kernels resolve it; per-head scales and ALiBi slopes point into `options`).
void set_attention_params(PagedAttentionParams& p, const AttentionOptions& options, std::int32_t head_size);

/// Inputs point at c's tensors and options' slopes / per-head scales; outputs are null.
DecodeParams case_decode_params(const cases::DecodeCase& c, const AttentionOptions& options);
PrefixParams case_prefix_params(const cases::PrefixCase& c, const AttentionOptions& options);
/// A case the device fills (bench/filled_case.hpp): the same, with null tensor pointers.
DecodeParams case_decode_params(const bench::FilledDecodeCase& c, const AttentionOptions& options);
PrefixParams case_prefix_params(const bench::FilledPrefixCase& c, const AttentionOptions& options);

/// Whether pao has a CUDA kernel for a launch variant: v1, v2 (+ reduce) and prefix, not the
/// prefix kind's fallback.
bool has_cuda_kernel(KernelVariant variant);

/// The host copies of seq_lens (and query_lens) the plans need.
std::vector<std::int32_t> case_seq_lens(const Tensor& seq_lens);

}  // namespace pao::cuda::check

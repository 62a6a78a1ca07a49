// The launch parameters of a test case: layouts, strides and scalars taken from a DecodeCase /
// PrefixCase and its options, pointers at the case's own host tensors. The GPU harness swaps the
// pointers for device copies; the CPU emulation uses them as they are. Plain C++.
#pragma once

#include <cstdint>
#include <vector>

#include "pao/attention_options.hpp"
#include "pao/cuda/decode_params.hpp"
#include "pao/cuda/prefix_params.hpp"
#include "pao/decode_case.hpp"
#include "pao/prefix_case.hpp"

namespace pao::cuda::check {

/// PagedCacheLayout of a contiguous cache tensor of a case (vLLM or NHD).
PagedCacheLayout case_cache_layout(const Tensor& cache, KVLayout layout, bool is_key);

/// Inputs point at c's tensors and options' slopes / per-head scales; outputs are null.
DecodeParams case_decode_params(const DecodeCase& c, const AttentionOptions& options);
PrefixParams case_prefix_params(const PrefixCase& c, const AttentionOptions& options);

/// The host copies of seq_lens (and query_lens) the plans need.
std::vector<std::int32_t> case_seq_lens(const Tensor& seq_lens);

}  // namespace pao::cuda::check

// PrefixParams: everything one prefix (chunked-prefill) launch reads and writes — device pointers,
// sizes, element strides and scalars, with vLLM's names (context_attention_fwd): the cached context
// and scalars of PagedAttentionParams (any positive block size), plus the new tokens and out.
// Plain C++.
#pragma once

#include <cstdint>

#include "pao/cuda/attention_params.hpp"

namespace pao::cuda {

struct PrefixParams : PagedAttentionParams {
  std::int32_t num_tokens = 0;  // new tokens of the whole batch

  /// query [num_tokens, num_heads, head_size]; key, value [num_tokens, num_kv_heads, head_size]
  /// (the new tokens); element strides.
  const void* query = nullptr;
  std::int64_t query_token_stride = 0, query_head_stride = 0, query_dim_stride = 1;
  const void* key = nullptr;
  std::int64_t key_token_stride = 0, key_head_stride = 0, key_dim_stride = 1;
  const void* value = nullptr;
  std::int64_t value_token_stride = 0, value_head_stride = 0, value_dim_stride = 1;
  /// The new tokens' K/V from their slots of the paged cache, dequantised like the context
  /// (pao's new_kv_source "cache": FlashAttention / FlashInfer / IPEX), not from key / value.
  bool new_kv_from_cache = false;

  /// out [num_tokens, num_heads, head_size], contiguous, dtype. Sequence offsets and lengths come
  /// from the plan (plan_prefix with the host's seq_lens and query_lens).
  void* out = nullptr;
};

}  // namespace pao::cuda

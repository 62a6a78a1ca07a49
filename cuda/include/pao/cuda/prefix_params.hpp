// PrefixParams: everything one prefix (chunked-prefill) launch reads and writes — device pointers,
// sizes, element strides and scalars, with vLLM's names (context_attention_fwd). Plain C++.
#pragma once

#include <cstdint>

#include "pao/dtype.hpp"
#include "pao/paged_cache_layout.hpp"

namespace pao::cuda {

struct PrefixParams {
  DType dtype = DType::f16;           // query, key, value, out: f32 / f16 / bf16
  DType kv_cache_dtype = DType::f16;  // = dtype, or fp8_e4m3 / fp8_e5m2
  std::int32_t num_seqs = 0;
  std::int32_t num_tokens = 0;  // new tokens of the whole batch
  std::int32_t num_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_size = 0;
  std::int32_t block_size = 16;  // any positive size

  /// query [num_tokens, num_heads, head_size]; key, value [num_tokens, num_kv_heads, head_size]
  /// (the new tokens); element strides.
  const void* query = nullptr;
  std::int64_t query_token_stride = 0, query_head_stride = 0, query_dim_stride = 1;
  const void* key = nullptr;
  std::int64_t key_token_stride = 0, key_head_stride = 0, key_dim_stride = 1;
  const void* value = nullptr;
  std::int64_t value_token_stride = 0, value_head_stride = 0, value_dim_stride = 1;

  /// The cached context, as for decode (layouts are data).
  const void* key_cache = nullptr;
  const void* value_cache = nullptr;
  PagedCacheLayout key_layout;
  PagedCacheLayout value_layout;
  /// block_tables [num_seqs, >= blocks of the longest context] i32, row stride in elements.
  const std::int32_t* block_tables = nullptr;
  std::int64_t block_table_stride = 0;

  float scale = 1.0f;
  const float* alibi_slopes = nullptr;  // [num_heads] or nullptr
  float soft_cap = 0.0f;                // 0 = off
  std::int32_t sliding_window = 0;      // 0 = off
  float k_scale = 1.0f;                 // fp8 caches: per tensor, unless per-KV-head scales are given
  float v_scale = 1.0f;
  const float* k_head_scales = nullptr;
  const float* v_head_scales = nullptr;

  /// out [num_tokens, num_heads, head_size], contiguous, dtype. Sequence offsets and lengths come
  /// from the plan (plan_prefix with the host's seq_lens and query_lens).
  void* out = nullptr;
};

}  // namespace pao::cuda

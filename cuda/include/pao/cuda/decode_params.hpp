// DecodeParams: everything one decode launch reads and writes — device pointers, sizes, element
// strides and scalars, with vLLM's names (FlashAttention's "one params struct per op"). Plain
// C++: the host checks it (decode_launch.hpp) without a GPU.
#pragma once

#include <cstdint>

#include "pao/dtype.hpp"
#include "pao/paged_cache_layout.hpp"

namespace pao::cuda {

struct DecodeParams {
  DType dtype = DType::f16;           // query, out, tmp_out: f32 / f16 / bf16
  DType kv_cache_dtype = DType::f16;  // = dtype, or fp8_e4m3 / fp8_e5m2 (one byte per element)
  std::int32_t num_seqs = 0;
  std::int32_t num_heads = 0;
  std::int32_t num_kv_heads = 0;  // num_heads % num_kv_heads == 0 (GQA / MQA)
  std::int32_t head_size = 0;
  std::int32_t block_size = 16;

  /// query [num_seqs, num_heads, head_size], any element strides.
  const void* query = nullptr;
  std::int64_t query_seq_stride = 0;
  std::int64_t query_head_stride = 0;
  std::int64_t query_dim_stride = 1;

  /// Paged caches. The layout is data: vLLM's key [num_blocks, num_kv_heads, head_size/x,
  /// block_size, x] and value [num_blocks, num_kv_heads, head_size, block_size], NHD
  /// [num_blocks, block_size, num_kv_heads, head_size], or any other strides.
  const void* key_cache = nullptr;
  const void* value_cache = nullptr;
  PagedCacheLayout key_layout;
  PagedCacheLayout value_layout;

  /// block_tables [num_seqs, >= blocks of the longest sequence] i32, row stride in elements.
  const std::int32_t* block_tables = nullptr;
  std::int64_t block_table_stride = 0;
  /// seq_lens [num_seqs] i32.
  const std::int32_t* seq_lens = nullptr;

  float scale = 1.0f;                   // multiplies q·k (pao's default: 1 / sqrt(head_size))
  const float* alibi_slopes = nullptr;  // [num_heads] or nullptr (no ALiBi)
  float soft_cap = 0.0f;                // extension: cap * tanh(logit / cap); 0 = off
  std::int32_t sliding_window = 0;      // extension: keys with query_pos - key < window; 0 = off
  /// fp8 caches only: value = fp8 * scale. Per-KV-head scales [num_kv_heads] when non-null
  /// (extension), else vLLM's per-tensor k_scale / v_scale.
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  const float* k_head_scales = nullptr;
  const float* v_head_scales = nullptr;

  /// out [num_seqs, num_heads, head_size], contiguous, dtype.
  void* out = nullptr;
  /// V2 only, contiguous. tmp_out [num_seqs, num_heads, max_num_partitions, head_size] (dtype);
  /// max_logits, exp_sums [num_seqs, num_heads, max_num_partitions] (f32).
  void* tmp_out = nullptr;
  float* max_logits = nullptr;
  float* exp_sums = nullptr;
};

}  // namespace pao::cuda

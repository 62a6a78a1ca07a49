// PagedAttentionParams: what every CUDA attention launch (decode and prefix) reads of the paged
// cache and the attention scalars — sizes, device pointers, the cache layouts (data, built with
// pao/layout/paged_cache_layout.hpp) and vLLM's scalars. DecodeParams and PrefixParams extend it.
// Plain C++: the host checks it (check_attention_params) without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "pao/core/dtype.hpp"
#include "pao/cuda/status.hpp"
#include "pao/kernels/logits.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::cuda {

/// An integer cache tensor's scales and zero points (pao/numerics/kv_quant.hpp): device pointers
/// of f32 or f16 elements, at layout.offset(block, kv head, token in block, dim).
struct QuantTensorParams {
  const void* scale = nullptr;
  const void* zero_point = nullptr;
  DType scale_dtype = DType::f32;
  DType zero_point_dtype = DType::f32;
  QuantParamLayout layout;
};

struct PagedAttentionParams : LaunchShape {  // num_heads % num_kv_heads == 0 (GQA / MQA)
  DType dtype = DType::f16;                  // query, key, value, out, tmp_out: f32 / f16 / bf16
  DType kv_cache_dtype = DType::f16;         // = dtype, fp8_e4m3 / fp8_e5m2, or u8 / i8 (u4: u8 codes 0..15)

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

  float scale = 1.0f;                   // multiplies q·k (pao's default: default_scale(head_size))
  const float* alibi_slopes = nullptr;  // [num_heads] or nullptr (no ALiBi)
  float soft_cap = 0.0f;                // extension: cap * tanh(logit / cap); 0 = off
  std::int32_t sliding_window = 0;      // extension: keys with query_pos - key < window; 0 = off
  /// fp8 caches only: value = fp8 * scale. Per-KV-head scales [num_kv_heads] when non-null
  /// (extension), else vLLM's per-tensor k_scale / v_scale.
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  const float* k_head_scales = nullptr;
  const float* v_head_scales = nullptr;
  /// Integer caches only: value = (code - zero_point) * scale in f32, rounded to dtype (the
  /// oracle's kernel precision).
  QuantTensorParams key_quant, value_quant;
};

/// The logit scalars of query head `head` (pao/kernels/logits.hpp), as the kernels read them.
PAO_HD LogitParams logit_params(const PagedAttentionParams& p, std::int32_t head) {
  LogitParams l;
  l.scale = p.scale;
  l.soft_cap = p.soft_cap;
  l.alibi = p.alibi_slopes != nullptr;
  l.alibi_slope = l.alibi ? p.alibi_slopes[head] : 0.0f;
  l.sliding_window = p.sliding_window;
  return l;
}

/// The checks every attention launch makes, decode and prefix: the head counts, the cache and
/// block-table pointers (with sequences to run), the scalar rules of every attention kernel of pao
/// (pao/kernels/attention_options.hpp: scale, soft-cap, window, fp8 scales) and the block-table
/// stride; the message of the first broken one.
Status check_attention_params(const PagedAttentionParams& p);

namespace detail {

/// A size of the params against the plan's.
struct PlanField {
  const char* name;
  std::int64_t params, plan;
};
/// "<name> = <params> but the plan was made for <name> = <plan>" for the first that differs.
Status check_same_as_plan(std::initializer_list<PlanField> fields);
/// The plan lists one CTA per grid point.
Status check_plan_grid(std::size_t num_ctas, std::int64_t x, std::int64_t y, std::int64_t z);
/// "<name>: null device pointer<suffix>" for the first null one.
struct NamedPointer {
  const char* name;
  const void* ptr;
};
Status check_pointers(std::initializer_list<NamedPointer> pointers, const char* suffix = "");
/// CUDA's grid limits: y and z at most 65535 CTAs (x < 2^31 always holds here).
Status check_grid_limits(std::int64_t y, const char* y_name, std::int64_t z, const char* z_name);

}  // namespace detail

}  // namespace pao::cuda

// Options shared by every attention kernel of pao (decode V1/V2 and prefix), and the choice of
// precision. Defaults equal vLLM's: no ALiBi, no soft-cap, no sliding window, k/v scales 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao {

enum class Precision : std::uint8_t {
  exact,   // every stored input decoded to fp64, fp64 math, one final rounding
  kernel,  // fp32 emulation of the GPU kernel: its rounding points and reduction orders
};

/// Integer caches (u8 / i8): how K and V were quantised and their scale and zero-point tensors,
/// [num_blocks, num_kv_heads, rows, cols] as quant_param_shape lays them out (f32 or f16).
/// reshape_and_cache writes them; the kernels read them.
struct KVQuantArgs {
  KVQuant spec;
  TensorView key_scale, key_zero_point, value_scale, value_zero_point;

  const TensorView& scale(CacheTensor t) const { return t == CacheTensor::key ? key_scale : value_scale; }
  const TensorView& zero_point(CacheTensor t) const {
    return t == CacheTensor::key ? key_zero_point : value_zero_point;
  }
};

struct AttentionOptions {
  /// Multiplies q·k. Unset: 1 / sqrt(head_size).
  std::optional<float> scale;
  /// fp8 caches: stored value = fp8 * k_scale (vLLM's per-tensor scales). Ignored otherwise.
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  /// Extension: per-KV-head scales [num_kv_heads]; when non-empty they replace k_scale/v_scale.
  std::vector<float> k_head_scales;
  std::vector<float> v_head_scales;
  /// Integer caches: their scales and zero points (ignored for other caches).
  KVQuantArgs kv_quant;
  /// [num_heads] f32, or empty for no ALiBi. Decode bias: slope * (token - seq_len + 1).
  TensorView alibi_slopes;
  /// Extension: logits become soft_cap * tanh(logits / soft_cap) (after scale, before ALiBi).
  /// 0 = off.
  float soft_cap = 0.0f;
  /// Extension: a query at position i sees keys j with i - j < sliding_window. 0 = off.
  std::int32_t sliding_window = 0;
};

/// What every attention kernel reads of the paged cache, with vLLM's names and layouts (decode's
/// DecodeArgs and prefix's PrefixArgs extend it).
/// Where a prefix kernel reads the K/V of the new tokens (PrefixArgs::new_kv_source).
enum class NewKVSource : std::uint8_t { input, cache };
/// "input" or "cache".
const char* new_kv_source_name(NewKVSource source);
/// The source named `name`; false when there is none.
bool try_parse_new_kv_source(std::string_view name, NewKVSource& source);

struct PagedKVArgs {
  TensorView key_cache;    // vllm: [num_blocks, num_kv_heads, head_size/x, block_size, x]
                           // nhd:  [num_blocks, block_size, num_kv_heads, head_size]
                           // hnd:  [num_blocks, num_kv_heads, block_size, head_size]
  TensorView value_cache;  // vllm: [num_blocks, num_kv_heads, head_size, block_size]
                           // nhd / hnd: as key_cache
                           // dtype: the query's, or fp8_e4m3 / fp8_e5m2 (both caches alike)
  KVLayout kv_layout = KVLayout::vllm;
  TensorView block_tables;  // [num_seqs, max_num_blocks_per_seq] i32
  TensorView seq_lens;      // [num_seqs] i32 (prefix: context + new tokens)
  AttentionOptions options;
};

/// vLLM's default softmax scale: 1 / sqrt(head_size), computed in fp64 and rounded once to f32.
float default_scale(std::int32_t head_size);
/// The scale the kernels use: options.scale, else default_scale(head_size).
float resolved_scale(const AttentionOptions& options, std::int32_t head_size);

/// The rules of the attention scalars, one definition for every kernel (the CPU kernels and the
/// CUDA launch checks): scale finite, soft_cap finite and >= 0, sliding_window >= 0. Throws
/// pao::Error naming the scalar and the rule.
void check_attention_scalars(float scale, float soft_cap, std::int32_t sliding_window);
/// An fp8 dequantisation scale (k_scale, v_scale, a per-head entry) is finite and positive.
void check_fp8_scale(float scale, std::string_view name);

}  // namespace pao

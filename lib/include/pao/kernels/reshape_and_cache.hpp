// Writing new tokens' K and V into the paged caches: vLLM's reshape_and_cache (vLLM cache layout)
// and reshape_and_cache_flash (NHD), so that cases are built the way a serving engine builds them.
#pragma once

#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/layout/paged_cache_layout.hpp"

namespace pao {

/// Token i of key / value goes to slot s = slot_mapping[i] = block * block_size + offset of both
/// caches; s = -1 marks a padding token, which is skipped. Only the slots named are written.
///   cache dtype = key's dtype: the element is copied bit for bit;
///   fp8_e4m3 / fp8_e5m2:       stored = fp8(float(x) / scale), one division in fp32, then round to
///                              nearest even with saturation to +-max finite (vLLM's
///                              __nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, ...)).
///   u8 / i8 / u4 (scales.kv_quant): by_token and group_G rows quantised one by one with their own
///                              scales and zero points (written into kv_quant's param tensors);
///                              a by_channel block written after its first slot is requantised:
///                              its earlier tokens dequantised in f32, (code - zp) * scale, the new
///                              rows appended, the block's scales recomputed over all of them and
///                              every code rewritten (OpenVINO's rule); one call's slots of such a
///                              block must follow each other.
/// The scales are those of `scales` (k_scale / v_scale, or the per-KV-head k_head_scales /
/// v_head_scales, or kv_quant), the same options the attention call reads; every other field is
/// ignored.
///
/// \param key          [num_tokens, num_kv_heads, head_size] f32/f16/bf16
/// \param value        like key
/// \param key_cache    vllm: [num_blocks, num_kv_heads, head_size/x, block_size, x]; nhd: [num_blocks,
///                     block_size, num_kv_heads, head_size]; the key's dtype or fp8
/// \param value_cache  vllm: [num_blocks, num_kv_heads, head_size, block_size]; nhd: like key_cache
/// \param slot_mapping [n] i64 or i32, n <= num_tokens (vLLM: tokens past n are padding); every
///                     entry -1 or in [0, num_blocks * block_size), no slot twice
/// Throws pao::Error (naming tensor, index and rule) before writing anything.
void reshape_and_cache(const TensorView& key, const TensorView& value, Tensor& key_cache, Tensor& value_cache,
                       const TensorView& slot_mapping, KVLayout kv_layout = KVLayout::vllm,
                       const AttentionOptions& scales = {});

/// The same write into caller memory (the Python package's in-place op): `key_cache` and
/// `value_cache` are views, strided as the kernels read them, whose data this call writes.
void reshape_and_cache_into(const TensorView& key, const TensorView& value, const TensorView& key_cache,
                            const TensorView& value_cache, const TensorView& slot_mapping,
                            KVLayout kv_layout = KVLayout::vllm, const AttentionOptions& scales = {});

}  // namespace pao

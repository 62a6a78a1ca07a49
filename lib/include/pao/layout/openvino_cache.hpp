// OpenVINO's integer cache bytes, a named layout of pao's integer caches: the CPU plugin of
// OpenVINO 2026.4 (PagedAttentionExtension, KV_CACHE_PRECISION u8 / u4) keeps each [block, KV head]
// of a u8 / u4 cache in the HND order with its scales and zero points inline (f32):
//   by_token:   block_size rows of [f32 scale, f32 zero point, codes of the row]
//               -> [num_blocks, num_kv_heads, block_size, 8 + head_size * bits / 8] u8
//   by_channel: f32 scale[head_size], f32 zero point[head_size] as rows of the code width, then
//               block_size rows of codes
//               -> [num_blocks, num_kv_heads, 64 / bits + block_size, head_size * bits / 8] u8
//   u4: two codes to a byte, element 2i in the HIGH nibble (pao::pack_u4 puts it in the low one).
// pao's own tensors keep the codes one per byte in the case's kv_layout and the scales and zero
// points apart (pao/numerics/kv_quant.hpp); these convert between the two, bit for bit, so that a
// vendor's cache in OpenVINO's bytes is judged as codes, scales and zero points.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pao/core/tensor.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao {

/// The shape of one cache tensor in OpenVINO's bytes, or nullopt with `why` set when OpenVINO has
/// no such layout (groups, i8 codes, f16 params).
std::optional<Shape> openvino_cache_shape(const TensorQuant& q, DType code_dtype, DType param_dtype,
                                          std::int32_t bits, std::int64_t num_blocks,
                                          std::int64_t num_kv_heads, std::int64_t head_size,
                                          std::int64_t block_size, std::string* why = nullptr);

/// pao's codes (an HND cache [num_blocks, num_kv_heads, block_size, head_size] u8, one code per
/// byte) and f32 param tensors of quant_param_shape as OpenVINO's bytes.
Tensor pack_openvino_cache(const Tensor& codes, const Tensor& scale, const Tensor& zero_point,
                           const TensorQuant& q, std::int32_t bits);

/// OpenVINO's bytes back as pao's tensors. Throws pao::Error naming the tensor when `bytes` does
/// not have the layout's shape.
struct SplitIntegerCache {
  Tensor codes, scale, zero_point;
};
SplitIntegerCache unpack_openvino_cache(const Tensor& bytes, const TensorQuant& q, std::int32_t bits,
                                        std::int64_t head_size, std::int64_t block_size,
                                        const std::string& name);

}  // namespace pao

// OpenVINO's integer cache bytes (pao/layout/openvino_cache.hpp).
#include "pao/layout/openvino_cache.hpp"

#include <cstring>

#include "pao/core/error.hpp"

namespace pao {

namespace {

bool by_channel(const TensorQuant& q) { return q.granularity == QuantGranularity::by_channel; }

/// Code d of a row of `width` bytes (u4: element 2i in the high nibble of byte i).
std::uint8_t code_at(const std::uint8_t* row, std::int64_t d, std::int32_t bits) {
  if (bits == 8) return row[d];
  const std::uint8_t b = row[d / 2];
  return d % 2 == 0 ? static_cast<std::uint8_t>(b >> 4) : static_cast<std::uint8_t>(b & 15);
}

void put_code(std::uint8_t* row, std::int64_t d, std::int32_t bits, std::uint8_t code) {
  if (bits == 8) {
    row[d] = code;
    return;
  }
  std::uint8_t& b = row[d / 2];
  b = d % 2 == 0 ? static_cast<std::uint8_t>((b & 15) | (code << 4))
                 : static_cast<std::uint8_t>((b & 0xf0) | code);
}

}  // namespace

std::optional<Shape> openvino_cache_shape(const TensorQuant& q, DType code_dtype, DType param_dtype,
                                          std::int32_t bits, std::int64_t num_blocks,
                                          std::int64_t num_kv_heads, std::int64_t head_size,
                                          std::int64_t block_size, std::string* why) {
  const auto refuse = [&](const std::string& reason) -> std::optional<Shape> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (code_dtype != DType::u8)
    return refuse("OpenVINO's integer caches are u8 or u4 codes, not " + std::string(dtype_name(code_dtype)));
  if (param_dtype != DType::f32) return refuse("OpenVINO keeps f32 scales and zero points inline");
  if (q.granularity == QuantGranularity::group)
    return refuse("the layout is by token or by channel, not " + to_string(q));
  const std::int64_t width = head_size * bits / 8;
  if (by_channel(q)) return Shape{num_blocks, num_kv_heads, 64 / bits + block_size, width};
  return Shape{num_blocks, num_kv_heads, block_size, 8 + width};
}

Tensor pack_openvino_cache(const Tensor& codes, const Tensor& scale, const Tensor& zero_point,
                           const TensorQuant& q, std::int32_t bits) {
  require(codes.dtype() == DType::u8 && codes.shape().size() == 4,
          "pack_openvino_cache: codes must be an HND u8 cache");
  const std::int64_t nb = codes.size(0), nkv = codes.size(1), bs = codes.size(2), hs = codes.size(3);
  std::string why;
  const std::optional<Shape> shape =
      openvino_cache_shape(q, DType::u8, scale.dtype(), bits, nb, nkv, hs, bs, &why);
  require(shape.has_value(), "pack_openvino_cache: ", why);
  require(scale.dtype() == DType::f32 && zero_point.dtype() == DType::f32,
          "pack_openvino_cache: the scales and zero points must be f32 tensors");
  Tensor out = Tensor::filled(DType::u8, *shape, 0.0);
  const std::int64_t rows = (*shape)[2], row_bytes = (*shape)[3];
  const QuantParamLayout pl = quant_param_layout(q, nkv, hs, bs);
  const auto param_bits = [&](const Tensor& t, std::int64_t offset, std::uint8_t* to) {
    std::memcpy(to, t.bytes() + offset * 4, 4);  // the stored bits, NaN payloads included
  };
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t h = 0; h < nkv; ++h) {
      std::uint8_t* base = out.data<std::uint8_t>() + (b * nkv + h) * rows * row_bytes;
      const std::int64_t code_row0 = by_channel(q) ? rows - bs : 0, code_offset = by_channel(q) ? 0 : 8;
      if (by_channel(q)) {
        for (std::int64_t d = 0; d < hs; ++d) {  // scale[hs], then zero point[hs]
          param_bits(scale, pl.offset(b, h, 0, d), base + 4 * d);
          param_bits(zero_point, pl.offset(b, h, 0, d), base + 4 * (hs + d));
        }
      }
      for (std::int64_t t = 0; t < bs; ++t) {
        std::uint8_t* row = base + (code_row0 + t) * row_bytes;
        if (!by_channel(q)) {
          param_bits(scale, pl.offset(b, h, t, 0), row);
          param_bits(zero_point, pl.offset(b, h, t, 0), row + 4);
        }
        for (std::int64_t d = 0; d < hs; ++d)
          put_code(row + code_offset, d, bits, static_cast<std::uint8_t>(codes.at({b, h, t, d})));
      }
    }
  return out;
}

SplitIntegerCache unpack_openvino_cache(const Tensor& bytes, const TensorQuant& q, std::int32_t bits,
                                        std::int64_t head_size, std::int64_t block_size,
                                        const std::string& name) {
  require(bytes.dtype() == DType::u8 && bytes.shape().size() == 4, name,
          ": OpenVINO's cache bytes are a 4-d u8 tensor, got ", dtype_name(bytes.dtype()), " ",
          shape_to_string(bytes.shape()));
  const std::int64_t nb = bytes.size(0), nkv = bytes.size(1);
  std::string why;
  const std::optional<Shape> shape =
      openvino_cache_shape(q, DType::u8, DType::f32, bits, nb, nkv, head_size, block_size, &why);
  require(shape.has_value(), name, ": ", why);
  require(bytes.shape() == *shape, name, ": shape ", shape_to_string(bytes.shape()), ", OpenVINO's ",
          to_string(q), " layout is ", shape_to_string(*shape));
  const Tensor dense = Tensor::copy_of(bytes.view());  // contiguous
  SplitIntegerCache out;
  out.codes = Tensor(DType::u8, {nb, nkv, block_size, head_size});
  const Shape param_shape = quant_param_shape(q, nb, nkv, head_size, block_size);
  out.scale = Tensor(DType::f32, param_shape);
  out.zero_point = Tensor(DType::f32, param_shape);
  const std::int64_t rows = (*shape)[2], row_bytes = (*shape)[3];
  const QuantParamLayout pl = quant_param_layout(q, nkv, head_size, block_size);
  const auto put_bits = [&](Tensor& t, std::int64_t offset, const std::uint8_t* from) {
    std::memcpy(t.bytes() + offset * 4, from, 4);
  };
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t h = 0; h < nkv; ++h) {
      const std::uint8_t* base = dense.data<std::uint8_t>() + (b * nkv + h) * rows * row_bytes;
      const std::int64_t code_row0 = by_channel(q) ? rows - block_size : 0,
                         code_offset = by_channel(q) ? 0 : 8;
      if (by_channel(q))
        for (std::int64_t d = 0; d < head_size; ++d) {
          put_bits(out.scale, pl.offset(b, h, 0, d), base + 4 * d);
          put_bits(out.zero_point, pl.offset(b, h, 0, d), base + 4 * (head_size + d));
        }
      for (std::int64_t t = 0; t < block_size; ++t) {
        const std::uint8_t* row = base + (code_row0 + t) * row_bytes;
        if (!by_channel(q)) {
          put_bits(out.scale, pl.offset(b, h, t, 0), row);
          put_bits(out.zero_point, pl.offset(b, h, t, 0), row + 4);
        }
        for (std::int64_t d = 0; d < head_size; ++d)
          out.codes.set({b, h, t, d}, code_at(row + code_offset, d, bits));
      }
    }
  return out;
}

}  // namespace pao

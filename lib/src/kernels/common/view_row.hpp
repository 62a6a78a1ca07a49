// One row (i, j, :) of a rank-3 strided view, decoded to float or double (exact: every
// activation dtype is a float, and every float a double). Queries and prefix K/V rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "pao/core/tensor.hpp"
#include "pao/numerics/element.hpp"

namespace pao::detail {

template <typename T>
void read_row(const TensorView& t, std::int64_t i, std::int64_t j, std::int32_t length, T* dst) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype));
  const std::byte* base = t.bytes() + t.offset({i, j, 0}) * es;
  if (t.strides[2] == 1) {
    if constexpr (std::is_same_v<T, float>)
      decode_to_f32(t.dtype, base, dst, static_cast<std::size_t>(length));
    else
      decode_to_f64(t.dtype, base, dst, static_cast<std::size_t>(length));
    return;
  }
  for (std::int32_t d = 0; d < length; ++d)
    dst[d] = static_cast<T>(decode_element(t.dtype, base + d * t.strides[2] * es));
}

}  // namespace pao::detail

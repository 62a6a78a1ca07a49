// Runtime values to compile-time ones, for the fused loops whose register arrays are sized by a
// count (heads in a group, runs of dims) or whose loads depend on the dtype.
#pragma once

#include <type_traits>

#include "pao/core/dtype.hpp"

namespace pao::detail {

/// fn(std::integral_constant<int, n>{}) for 1 <= n <= Max; nothing for other n.
template <int Max, typename Fn>
void with_count(int n, Fn&& fn) {
  if constexpr (Max >= 1) {
    if (n == Max) {
      fn(std::integral_constant<int, Max>{});
      return;
    }
    with_count<Max - 1>(n, fn);
  }
}

/// Heads [0, G) in groups of four, then the rest: fn(first_head, std::integral_constant<int, n>{}).
template <typename Fn>
void for_head_groups(int G, Fn&& fn) {
  int h = 0;
  for (; h + 4 <= G; h += 4) fn(h, std::integral_constant<int, 4>{});
  if (h < G) with_count<3>(G - h, [&](auto n) { fn(h, n); });
}

/// fn(std::integral_constant<DType, dt>{}) for dt = f16 or bf16, and f32 for any other dtype.
template <typename Fn>
void with_float_dtype(DType dt, Fn&& fn) {
  if (dt == DType::f16)
    fn(std::integral_constant<DType, DType::f16>{});
  else if (dt == DType::bf16)
    fn(std::integral_constant<DType, DType::bf16>{});
  else
    fn(std::integral_constant<DType, DType::f32>{});
}

}  // namespace pao::detail

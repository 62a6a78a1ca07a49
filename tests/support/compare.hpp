// Small comparison helpers for tests: bitwise tensor equality and the FlashAttention-style
// derived bound on the kernel precision's error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "pao/core/tensor.hpp"

namespace pao::test {

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

/// Unit roundoff of an activation dtype.
inline double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16:
      return 0x1p-11;
    case DType::bf16:
      return 0x1p-8;
    default:
      return 0x1p-24;
  }
}

/// max |a - b| over all elements; +inf when the sizes differ or an element is NaN in one of
/// the two only (NaN in both counts as agreement), so that a NaN can never pass a bound.
inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) return kInf;
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return kInf;
      continue;
    }
    const double d = std::abs(a[i] - b[i]);
    m = std::isnan(d) ? kInf : std::max(m, d);  // inf - inf
  }
  return m;
}

/// max |a| over all elements; +inf when one is NaN.
inline double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::isnan(v) ? std::numeric_limits<double>::infinity() : std::max(m, std::abs(v));
  return m;
}

}  // namespace pao::test

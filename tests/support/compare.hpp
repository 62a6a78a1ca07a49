// Small comparison helpers for tests: bitwise tensor equality and the largest differences
// (the unit roundoff of a dtype is pao::unit_roundoff, numerics/ulp.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/numerics/ulp.hpp"

namespace pao::test {

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

/// Where two tensors first differ, for a failure message: "[2, 5, 17]: 0.1235 vs 0.1232", or
/// their shapes or dtypes; "" when they are bit for bit equal.
inline std::string first_bitwise_difference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return std::string(dtype_name(a.dtype())) + " " + shape_to_string(a.shape()) + " vs " +
           std::string(dtype_name(b.dtype())) + " " + shape_to_string(b.shape());
  const std::size_t size = dtype_size(a.dtype());
  const std::vector<double> va = a.to_f64(), vb = b.to_f64();
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (std::memcmp(a.bytes() + at * size, b.bytes() + at * size, size) == 0) continue;
    std::ostringstream os;
    os.precision(9);
    os << shape_to_string(index_of_flat(a.shape(), i)) << ": " << va[at] << " vs " << vb[at];
    return os.str();
  }
  return "";
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

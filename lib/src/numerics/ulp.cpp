// Units of rounding error (pao/numerics/ulp.hpp).
#include "pao/numerics/ulp.hpp"

#include <algorithm>
#include <cmath>

namespace pao {

namespace {

/// An integer dtype has no rounding of its own: errors in it are measured in f32's units.
const DTypeInfo& floating_info(DType dtype) {
  return is_floating(dtype) ? dtype_info(dtype) : dtype_info(DType::f32);
}

}  // namespace

double unit_roundoff(DType dtype) { return std::ldexp(1.0, -floating_info(dtype).significand_bits); }

double ulp_of(DType dtype, double value) {
  const DTypeInfo& info = floating_info(dtype);
  const double a = std::fabs(value);
  const int e =
      (a > 0 && std::isfinite(a)) ? std::max<int>(std::ilogb(a), info.min_exponent) : info.min_exponent;
  return std::ldexp(1.0, e - (info.significand_bits - 1));
}

}  // namespace pao

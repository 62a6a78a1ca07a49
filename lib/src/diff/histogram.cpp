// ULP error histograms (pao/diff/histogram.hpp).
#include "pao/diff/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace pao::diff {

double ulp_of(DType dtype, double value) {
  int mantissa_bits = 24, min_exponent = -126;  // f32: 24-bit significand, smallest normal 2^-126
  switch (dtype) {
    case DType::f16:
      mantissa_bits = 11, min_exponent = -14;
      break;
    case DType::bf16:
      mantissa_bits = 8, min_exponent = -126;
      break;
    case DType::f64:
      mantissa_bits = 53, min_exponent = -1022;
      break;
    case DType::fp8_e4m3:
      mantissa_bits = 4, min_exponent = -6;
      break;
    case DType::fp8_e5m2:
      mantissa_bits = 3, min_exponent = -14;
      break;
    default:
      break;
  }
  const double a = std::fabs(value);
  const int e = (a > 0 && std::isfinite(a)) ? std::max(std::ilogb(a), min_exponent) : min_exponent;
  return std::ldexp(1.0, e - (mantissa_bits - 1));
}

const std::vector<std::string>& UlpHistogram::labels() {
  static const std::vector<std::string> l = {"0",    "<=0.5", "<=1",  "<=2",    "<=4",
                                             "<=16", "<=256", ">256", "nan/inf"};
  return l;
}

void UlpHistogram::add(double u) {
  static const double kEdges[] = {0, 0.5, 1, 2, 4, 16, 256};
  if (!std::isfinite(u)) {
    ++counts[8];
    return;
  }
  for (std::size_t b = 0; b < 7; ++b) {
    if (u <= kEdges[b]) {
      ++counts[b];
      return;
    }
  }
  ++counts[7];
}

}  // namespace pao::diff

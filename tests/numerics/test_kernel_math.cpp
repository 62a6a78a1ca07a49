// The shared device-function replacements (kernel_exp, kernel_tanh) against the C library in
// double, and the reduction trees against explicitly written ones.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "pao/numerics/kernel_math.hpp"

namespace {

/// Distance in float ulps between a float result and the correctly rounded-or-not double truth.
double ulp_error(float got, double truth) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(truth)) - 23);
  const double tiny = std::ldexp(1.0, -149);
  return std::abs(static_cast<double>(got) - truth) / std::max(ulp, tiny);
}

}  // namespace

TEST_CASE("kernel_exp is within 2 ulp of exp over its whole range") {
  double worst = 0;
  float worst_x = 0;
  for (float x = -103.9f; x < 88.72f; x += 0.000731f * (1.0f + std::abs(x))) {
    const double e = ulp_error(pao::kernel_exp(x), std::exp(static_cast<double>(x)));
    if (e > worst) {
      worst = e;
      worst_x = x;
    }
  }
  INFO("worst x = ", worst_x);
  CHECK(worst <= 2.0);
  CHECK(pao::kernel_exp(0.0f) == 1.0f);
  CHECK(pao::kernel_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(pao::kernel_exp(-200.0f) == 0.0f);
  CHECK(std::isinf(pao::kernel_exp(89.0f)));
  CHECK(std::isnan(pao::kernel_exp(std::numeric_limits<float>::quiet_NaN())));
  // Results in the subnormal range are rounded once.
  CHECK(ulp_error(pao::kernel_exp(-100.0f), std::exp(-100.0)) <= 2.0);
}

TEST_CASE("kernel_tanh is within 4 ulp of tanh") {
  double worst = 0;
  for (float x = -12.0f; x < 12.0f; x += 0.00137f)
    worst = std::max(worst, ulp_error(pao::kernel_tanh(x), std::tanh(static_cast<double>(x))));
  for (float x = 1e-30f; x < 0.3f; x *= 1.01f)
    worst = std::max(worst, ulp_error(pao::kernel_tanh(x), std::tanh(static_cast<double>(x))));
  CHECK(worst <= 4.0);
  CHECK(pao::kernel_tanh(0.0f) == 0.0f);
  CHECK(pao::kernel_tanh(50.0f) == 1.0f);
  CHECK(pao::kernel_tanh(-50.0f) == -1.0f);
}

TEST_CASE("butterfly_sum applies the xor-shuffle tree") {
  // With 4 lanes, lane 0 ends with (v0 + v2) + (v1 + v3); chosen values make other trees differ.
  float v[4] = {1.0f, 0x1p-24f, 0x1p-24f, 0x1p-24f};
  const float want = (1.0f + 0x1p-24f) + (0x1p-24f + 0x1p-24f);
  const float other = ((1.0f + 0x1p-24f) + 0x1p-24f) + 0x1p-24f;
  REQUIRE(want != other);
  CHECK(pao::butterfly_sum(v, 4) == want);
  float one[1] = {3.5f};
  CHECK(pao::butterfly_sum(one, 1) == 3.5f);
  float m[8] = {1, 9, -3, 4, std::numeric_limits<float>::quiet_NaN(), 2, 8, 0};
  CHECK(pao::butterfly_max(m, 8) == 9.0f);
}

// exact precision's exp (lib/src/numerics/exp_f64.hpp) against the C library's exp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "numerics/exp_f64.hpp"  // internal: exact precision's exp

namespace {

/// |got - truth| in units of the last place of truth (of the smallest normal below it).
double ulp_error(double got, double truth) {
  const double ulp =
      std::nextafter(std::abs(truth), std::numeric_limits<double>::infinity()) - std::abs(truth);
  return std::abs(got - truth) / std::max(ulp, std::numeric_limits<double>::denorm_min());
}

}  // namespace

TEST_CASE("exp_f64 is within 2 ulp of the C library's exp over the whole range") {
  std::vector<double> xs;
  // Geometric and linear sweeps, both signs, through the reduction's boundaries (n·ln2 ± ln2/2).
  for (double x = 1e-300; x < 709.7; x *= 1.0003) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  for (double x = -745.0; x < 709.7; x += 0.000917) xs.push_back(x);
  for (int n = -1070; n <= 1020; ++n)
    for (double d : {-0.5, -0.4999999999999, 0.4999999999999, 0.5})
      xs.push_back((n + d) * 0.6931471805599453);
  std::vector<double> got(xs.size());
  pao::detail::exp_f64_n(xs.data(), got.data(), static_cast<std::int64_t>(xs.size()));
  double worst = 0, worst_x = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double truth = std::exp(xs[i]);
    if (truth < std::numeric_limits<double>::min()) continue;  // subnormal results: below
    const double e = ulp_error(got[i], truth);
    if (e > worst) {
      worst = e;
      worst_x = xs[i];
    }
  }
  INFO("worst x = ", worst_x, ", ", xs.size(), " points");
  CHECK(worst <= 2.0);
}

TEST_CASE("exp_f64 rounds subnormal results once and handles the ends of the range") {
  using pao::detail::exp_f64;
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (double x = -745.1; x < -708.4; x += 0.0137) {
    INFO("x = ", x);
    // One ulp of the subnormal grid (the libm result is correctly rounded there to within 1).
    CHECK(std::abs(exp_f64(x) - std::exp(x)) <= 2 * std::numeric_limits<double>::denorm_min());
  }
  CHECK(exp_f64(0.0) == 1.0);
  CHECK(exp_f64(-0.0) == 1.0);
  CHECK(exp_f64(-746.0) == 0.0);
  CHECK(exp_f64(-1e300) == 0.0);
  CHECK(exp_f64(-inf) == 0.0);
  CHECK(!std::signbit(exp_f64(-inf)));
  CHECK(exp_f64(710.0) == inf);
  CHECK(exp_f64(inf) == inf);
  CHECK(std::isnan(exp_f64(std::numeric_limits<double>::quiet_NaN())));
  // Every lane computes alone: a NaN or an infinity in one lane leaves the others intact.
  const double in[9] = {std::nan(""), -inf, 1.0, -1.0, 0.5, -700.0, inf, -745.0, 2.0};
  double out[9];
  pao::detail::exp_f64_n(in, out, 9);
  CHECK(std::isnan(out[0]));
  CHECK(out[1] == 0.0);
  for (int i : {2, 3, 4, 5, 8}) CHECK(ulp_error(out[i], std::exp(in[i])) <= 2.0);
  CHECK(out[6] == inf);
  CHECK(std::abs(out[7] - std::exp(-745.0)) <= 2 * std::numeric_limits<double>::denorm_min());
}

// exp in fp64 for exact precision, eight lanes at a time, built only from IEEE +, ×, fma and bit
// operations, so that it gives the same bits on every ISA (simd.hpp) and at every lane.
//
//   x = n·ln2 + r, |r| <= ln2/2    n = round(x·log2 e), r = (x − n·ln2_hi) − n·ln2_lo (two fmas)
//   exp(r) = 1 + r + r²/2! + … + r¹³/13!   (Horner; the truncation is below 5e-18 relative)
//   exp(x) = exp(r) · 2^⌊n/2⌋ · 2^(n−⌊n/2⌋) (two normal factors, so that a subnormal result is
//                                           rounded once)
//
// Accuracy: within 2 ulp of a correctly rounded exp for normal results (test_exp_f64.cpp measures
// it against the C library's exp); x <= -746 and -inf give +0, x >= 710 and +inf give +inf, NaN
// gives NaN.
#pragma once

#include <cstdint>
#include <cstring>

#include "simd/vec.hpp"

namespace pao::detail {

using i64x8 = std::int64_t __attribute__((vector_size(64)));

inline f64x8 exp_f64x8(f64x8 x) {
  const f64x8 lo = splat<f64x8>(-746.0), hi = splat<f64x8>(710.0);
  x = x < lo ? lo : x;  // NaN compares false and stays NaN
  x = x > hi ? hi : x;
  // n = round-to-nearest-even(x·log2 e): adding 1.5·2^52 leaves n in the low mantissa bits.
  const f64x8 shifter = splat<f64x8>(6755399441055744.0);
  const f64x8 shifted = fma_vec(x, splat<f64x8>(1.4426950408889634), shifter);
  const f64x8 n = shifted - shifter;
  i64x8 k;
  std::memcpy(&k, &shifted, sizeof k);
  i64x8 shifter_bits;
  std::memcpy(&shifter_bits, &shifter, sizeof shifter_bits);
  k = k - shifter_bits;  // n as an integer, |n| <= 1077
  f64x8 r = fma_vec(-n, splat<f64x8>(0x1.62e42fefa39efp-1), x);
  r = fma_vec(-n, splat<f64x8>(0x1.abc9e3b39803fp-56), r);
  // 1/k! for k = 13 … 2.
  constexpr double kInvFactorial[] = {
      1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
      1.0 / 5040.0,       1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,      1.0 / 6.0,      1.0 / 2.0};
  f64x8 poly = splat<f64x8>(kInvFactorial[0]);
  for (int i = 1; i < 12; ++i) poly = fma_vec(poly, r, splat<f64x8>(kInvFactorial[i]));
  // exp(r) = 1 + (r + r²·poly): the small terms first, 1 added last.
  const f64x8 tail = fma_vec(r * r, poly, r);
  const f64x8 e = splat<f64x8>(1.0) + tail;
  const i64x8 half = k >> 1, rest = k - half;
  const i64x8 bias = {1023, 1023, 1023, 1023, 1023, 1023, 1023, 1023};
  const i64x8 s1_bits = (half + bias) << 52, s2_bits = (rest + bias) << 52;
  f64x8 s1, s2;
  std::memcpy(&s1, &s1_bits, sizeof s1);
  std::memcpy(&s2, &s2_bits, sizeof s2);
  return e * s1 * s2;
}

/// out[i] = exp(in[i]) for i < n (in == out allowed).
inline void exp_f64_n(const double* in, double* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) store_vec(out + i, exp_f64x8(load_vec<f64x8>(in + i)));
  if (i < n) {
    double buffer[8] = {};
    std::memcpy(buffer, in + i, static_cast<std::size_t>(n - i) * sizeof(double));
    store_vec(buffer, exp_f64x8(load_vec<f64x8>(buffer)));
    std::memcpy(out + i, buffer, static_cast<std::size_t>(n - i) * sizeof(double));
  }
}

/// exp of one value, the same bits as a lane of exp_f64x8.
inline double exp_f64(double x) {
  double v = x;
  exp_f64_n(&v, &v, 1);
  return v;
}

}  // namespace pao::detail

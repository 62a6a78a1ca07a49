// Arithmetic that the kernel precision (CPU emulation) and the CUDA kernels must compute alike:
// a deterministic exp and tanh built from IEEE operations and fma only (the GPU's __expf and
// tanhf cannot be reproduced on a CPU), and the reduction trees of warp shuffles.
// Device builds need `nvcc --fmad=false` (cuda/CMakeLists.txt sets it): nvcc would otherwise fuse
// `x * log2e + magic` in kernel_exp into one fma and move a rounding; host builds use
// -ffp-contract=off for the same reason.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pao/core/hd.hpp"

namespace pao {

namespace kmath_detail {
PAO_HD float bits_to_float(std::uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/// 2^n for n in [-126, 127], built from its bits.
PAO_HD float pow2i(int n) { return bits_to_float(static_cast<std::uint32_t>(n + 127) << 23); }
/// Round to nearest, ties to even, for |v| < 2^22 (adding and subtracting 1.5 * 2^23).
PAO_HD float round_even(float v) {
  const float magic = 12582912.0f;
  return (v + magic) - magic;
}
}  // namespace kmath_detail

/// exp(x) in float, within 2 ulp for every finite result; exp(-inf) = 0, exp(NaN) = NaN,
/// overflow gives +inf. Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, then a degree-7 Taylor
/// polynomial (truncation < 6e-9 relative) by Horner with fma.
PAO_HD float kernel_exp(float x) {
  using namespace kmath_detail;
  if (!(x == x)) return x;                                        // NaN
  if (x > 88.72283935546875f) return bits_to_float(0x7f800000u);  // overflow -> +inf
  if (x < -103.97908782958984f) return 0.0f;  // below half the smallest subnormal (and -inf)
  const float n = round_even(x * 1.44269502162933349609375f);
  float r = fmaf(-n, 0.693145751953125f, x);   // ln2 high part: 16 significant bits, n*hi exact
  r = fmaf(-n, 1.428606765330187045e-06f, r);  // ln2 low part
  float p = 1.98412698412698412526e-4f;        // 1/7!
  p = fmaf(p, r, 1.38888888888888894189e-3f);  // 1/6!
  p = fmaf(p, r, 8.33333333333333321769e-3f);  // 1/5!
  p = fmaf(p, r, 4.16666666666666643537e-2f);  // 1/4!
  p = fmaf(p, r, 1.66666666666666657415e-1f);  // 1/3!
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const int ni = static_cast<int>(n);
  if (ni > 127) return p * pow2i(127) * 2.0f;
  if (ni < -126) return (p * pow2i(ni + 64)) * pow2i(-64);  // one rounding, into the subnormals
  return p * pow2i(ni);
}

/// tanh(x) in float, within 4 ulp: an odd Taylor polynomial (11 terms, truncation < 1e-10
/// relative) below 0.55, 1 - 2/(e^{2|x|} + 1) above (where the cancellation costs a few ulp).
PAO_HD float kernel_tanh(float x) {
  if (!(x == x)) return x;
  const float a = x < 0.0f ? -x : x;
  float t;
  if (a < 0.55f) {
    // Coefficients of x^(2k+1): 2^(2k+2) (2^(2k+2) - 1) B_(2k+2) / (2k+2)!.
    const float a2 = a * a;
    float p = 9.69153795692e-5f;          // 18888466084/194896477400625
    p = fmaf(p, a2, -2.39129114244e-4f);  // -443861162/1856156927625
    p = fmaf(p, a2, 5.90027440946e-4f);   // 6404582/10854718875
    p = fmaf(p, a2, -1.45583438706e-3f);  // -929569/638512875
    p = fmaf(p, a2, 3.59212803657e-3f);   // 21844/6081075
    p = fmaf(p, a2, -8.86323552990e-3f);  // -1382/155925
    p = fmaf(p, a2, 2.18694885362e-2f);   // 62/2835
    p = fmaf(p, a2, -5.39682539683e-2f);  // -17/315
    p = fmaf(p, a2, 1.33333333333e-1f);   // 2/15
    p = fmaf(p, a2, -3.33333333333e-1f);  // -1/3
    t = fmaf(p * a2, a, a);
  } else if (a > 9.1f) {
    t = 1.0f;  // tanh rounds to 1 in float
  } else {
    t = 1.0f - 2.0f / (kernel_exp(2.0f * a) + 1.0f);
  }
  return x < 0.0f ? -t : t;
}

/// Lane 0's result of a warp's xor-shuffle reduction over `n` lanes (n a power of two):
///   for (mask = n/2; mask >= 1; mask /= 2) v += __shfl_xor_sync(~0u, v, mask);
/// Lane i holds v[i]; float addition commutes, so only the tree matters: at each step lane i
/// (i < mask) adds lane i + mask. Overwrites v.
PAO_HD float butterfly_sum(float* v, int n) {
  for (int mask = n / 2; mask >= 1; mask /= 2)
    for (int i = 0; i < mask; ++i) v[i] = v[i] + v[i + mask];
  return v[0];
}

/// Like butterfly_sum, for the max (fmaxf: a NaN operand yields the other operand).
PAO_HD float butterfly_max(float* v, int n) {
  for (int mask = n / 2; mask >= 1; mask /= 2)
    for (int i = 0; i < mask; ++i) v[i] = fmaxf(v[i], v[i + mask]);
  return v[0];
}

}  // namespace pao

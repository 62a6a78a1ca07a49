// The inner loops of the prefix kernel, vectorised (AVX-512 or AVX2 through the SIMD layer's
// `Simd<T>`, simd/vec.hpp; a scalar lane elsewhere) without moving a single rounding: fma is exactly rounded,
// so every instruction set gives the same bits, and the build has -ffp-contract=off.
//   - qk_rows:      S = Q·Kᵀ for up to 8 query rows against a dense K tile, each dot product one
//                   sequential fma chain over the dims (the first term a product); the vectors run
//                   across keys, so every lane holds one (row, key) chain;
//   - pv_row(_pair): acc += p·V for one row (or two rows with the same tokens, sharing the loads
//                   of V), tokens in order, one fma per (token, dim); the vectors run across dims,
//                   eight tokens per pass over acc (each dim's chain keeps its order);
//   - range_max:    a row maximum in lanes (exact and order-free for NaN-free input);
//   - kernel_exp_n: pao::kernel_exp on an array, its early returns turned into selects so that the
//                   loop vectorises; bit-identical to the scalar function
//                   (tests/kernels/prefix/test_prefix_kernel.cpp checks it over all interesting inputs).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pao/numerics/kernel_math.hpp"
#include "simd/vec.hpp"

namespace pao::detail {

/// Keys per chunk of qk_rows: two vectors per row (4 rows: 8 independent fma chains in flight).
template <typename T>
inline constexpr std::int32_t kQkChunk = 2 * Simd<T>::kLanes < 8 ? 8 : 2 * Simd<T>::kLanes;

/// s[r][j] = dot(q[r], kt[.][j]) for r < R, j < jpad (jpad a multiple of kQkChunk<T>).
/// q: R rows with stride ldq; kt: [head_size][ldk] (dim-major); s: R rows with stride lds.
template <typename T, int R>
inline void qk_rows(const T* q, std::int64_t ldq, const T* kt, std::int64_t ldk, std::int32_t head_size,
                    std::int32_t jpad, T* s, std::int64_t lds) {
  using V = Simd<T>;
  constexpr std::int32_t L = V::kLanes, NV = kQkChunk<T> / V::kLanes;
  for (std::int32_t jc = 0; jc < jpad; jc += kQkChunk<T>) {
    typename V::reg acc[R][NV];
    const T* k0 = kt + jc;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const typename V::reg qv = V::set1(q[r * ldq]);
#pragma GCC unroll 8
      for (std::int32_t c = 0; c < NV; ++c) acc[r][c] = V::mul(qv, V::load(k0 + c * L));
    }
    for (std::int32_t d = 1; d < head_size; ++d) {
      const T* kd = k0 + d * ldk;
      typename V::reg kv[NV];
#pragma GCC unroll 8
      for (std::int32_t c = 0; c < NV; ++c) kv[c] = V::load(kd + c * L);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const typename V::reg qv = V::set1(q[r * ldq + d]);
#pragma GCC unroll 8
        for (std::int32_t c = 0; c < NV; ++c) acc[r][c] = V::fma(qv, kv[c], acc[r][c]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (std::int32_t c = 0; c < NV; ++c) V::store(s + r * lds + jc + c * L, acc[r][c]);
  }
}

/// qk_rows for any row count (blocks of 8, then 4, then the rest).
template <typename T>
inline void qk_any_rows(const T* q, std::int64_t ldq, const T* kt, std::int64_t ldk, std::int32_t head_size,
                        std::int32_t jpad, std::int32_t rows, T* s, std::int64_t lds) {
  std::int32_t r = 0;
  for (; r + 8 <= rows; r += 8) qk_rows<T, 8>(q + r * ldq, ldq, kt, ldk, head_size, jpad, s + r * lds, lds);
  if (r + 4 <= rows) {
    qk_rows<T, 4>(q + r * ldq, ldq, kt, ldk, head_size, jpad, s + r * lds, lds);
    r += 4;
  }
  switch (rows - r) {
    case 3:
      qk_rows<T, 3>(q + r * ldq, ldq, kt, ldk, head_size, jpad, s + r * lds, lds);
      break;
    case 2:
      qk_rows<T, 2>(q + r * ldq, ldq, kt, ldk, head_size, jpad, s + r * lds, lds);
      break;
    case 1:
      qk_rows<T, 1>(q + r * ldq, ldq, kt, ldk, head_size, jpad, s + r * lds, lds);
      break;
    default:
      break;
  }
}

/// acc[d] = fma(p[t], v[t][d], acc[d]) for the tokens t = tokens[0 .. n), in that order, K at a
/// time (n a multiple of K). v: rows of `head_size` values with stride ldv.
template <typename T, int K>
inline void pv_tokens(const T* p, const std::int32_t* tokens, std::int32_t n, const T* v, std::int64_t ldv,
                      std::int32_t head_size, T* acc) {
  using V = Simd<T>;
  constexpr std::int32_t L = V::kLanes;
  for (std::int32_t i = 0; i < n; i += K) {
    const T* vr[K];
    T pk[K];
    typename V::reg pv[K];
    for (int k = 0; k < K; ++k) {
      vr[k] = v + tokens[i + k] * ldv;
      pk[k] = p[tokens[i + k]];
      pv[k] = V::set1(pk[k]);
    }
    std::int32_t d = 0;
    for (; d + L <= head_size; d += L) {
      typename V::reg a = V::load(acc + d);
#pragma GCC unroll 8
      for (int k = 0; k < K; ++k) a = V::fma(pv[k], V::load(vr[k] + d), a);
      V::store(acc + d, a);
    }
    for (; d < head_size; ++d) {
      T a = acc[d];
      for (int k = 0; k < K; ++k) a = std::fma(pk[k], vr[k][d], a);
      acc[d] = a;
    }
  }
}

/// acc[d] = fma(p[t], v[t][d], acc[d]) for the `n` tokens listed in `tokens`, in that order:
/// eight tokens per pass over acc, then one at a time.
template <typename T>
inline void pv_row(const T* p, const std::int32_t* tokens, std::int32_t n, const T* v, std::int64_t ldv,
                   std::int32_t head_size, T* acc) {
  const std::int32_t full = n / 8 * 8;
  pv_tokens<T, 8>(p, tokens, full, v, ldv, head_size, acc);
  pv_tokens<T, 1>(p, tokens + full, n - full, v, ldv, head_size, acc);
}

/// pv_tokens for two rows with the same token list: each row's arithmetic unchanged, the loads of
/// V shared.
template <typename T, int K>
inline void pv_tokens_pair(const T* p0, const T* p1, const std::int32_t* tokens, std::int32_t n, const T* v,
                           std::int64_t ldv, std::int32_t head_size, T* acc0, T* acc1) {
  using V = Simd<T>;
  constexpr std::int32_t L = V::kLanes;
  for (std::int32_t i = 0; i < n; i += K) {
    const T* vr[K];
    T pk0[K], pk1[K];
    typename V::reg pv0[K], pv1[K];
    for (int k = 0; k < K; ++k) {
      vr[k] = v + tokens[i + k] * ldv;
      pk0[k] = p0[tokens[i + k]];
      pk1[k] = p1[tokens[i + k]];
      pv0[k] = V::set1(pk0[k]);
      pv1[k] = V::set1(pk1[k]);
    }
    std::int32_t d = 0;
    for (; d + L <= head_size; d += L) {
      typename V::reg a0 = V::load(acc0 + d), a1 = V::load(acc1 + d);
#pragma GCC unroll 8
      for (int k = 0; k < K; ++k) {
        const typename V::reg vk = V::load(vr[k] + d);
        a0 = V::fma(pv0[k], vk, a0);
        a1 = V::fma(pv1[k], vk, a1);
      }
      V::store(acc0 + d, a0);
      V::store(acc1 + d, a1);
    }
    for (; d < head_size; ++d) {
      T a0 = acc0[d], a1 = acc1[d];
      for (int k = 0; k < K; ++k) {
        a0 = std::fma(pk0[k], vr[k][d], a0);
        a1 = std::fma(pk1[k], vr[k][d], a1);
      }
      acc0[d] = a0;
      acc1[d] = a1;
    }
  }
}

/// pv_row for two rows with the same token list.
template <typename T>
inline void pv_row_pair(const T* p0, const T* p1, const std::int32_t* tokens, std::int32_t n, const T* v,
                        std::int64_t ldv, std::int32_t head_size, T* acc0, T* acc1) {
  const std::int32_t full = n / 8 * 8;
  pv_tokens_pair<T, 8>(p0, p1, tokens, full, v, ldv, head_size, acc0, acc1);
  pv_tokens_pair<T, 1>(p0, p1, tokens + full, n - full, v, ldv, head_size, acc0, acc1);
}

/// The largest of x[0 .. n) (-inf if n = 0), in lanes so that the loop vectorises. The maximum
/// does not depend on the order (for inputs without NaN; zeros of either sign compare equal and
/// give the same exp(x - max) downstream).
template <typename T>
inline T range_max(const T* x, std::int32_t n) {
  constexpr std::int32_t W = 16;
  T lane[W];
  for (auto& l : lane) l = -std::numeric_limits<T>::infinity();
  std::int32_t i = 0;
  for (; i + W <= n; i += W)
    for (std::int32_t k = 0; k < W; ++k) lane[k] = lane[k] < x[i + k] ? x[i + k] : lane[k];
  for (; i < n; ++i) lane[0] = lane[0] < x[i] ? x[i] : lane[0];
  T m = lane[0];
  for (std::int32_t k = 1; k < W; ++k) m = m < lane[k] ? lane[k] : m;
  return m;
}

/// y[i] = kernel_exp(x[i]) for i < n, bit for bit (see pao/numerics/kernel_math.hpp for the method).
inline void kernel_exp_n(const float* x, float* y, std::int32_t n) {
  using kmath_detail::pow2i;
  for (std::int32_t i = 0; i < n; ++i) {
    const float xi = x[i];
    const bool nan = !(xi == xi);
    const bool over = xi > 88.72283935546875f;
    const bool under = xi < -103.97908782958984f;
    const float xr = (nan || over || under) ? 0.0f : xi;
    const float nf = kmath_detail::round_even(xr * 1.44269502162933349609375f);
    float r = std::fma(-nf, 0.693145751953125f, xr);
    r = std::fma(-nf, 1.428606765330187045e-06f, r);
    float p = 1.98412698412698412526e-4f;
    p = std::fma(p, r, 1.38888888888888894189e-3f);
    p = std::fma(p, r, 8.33333333333333321769e-3f);
    p = std::fma(p, r, 4.16666666666666643537e-2f);
    p = std::fma(p, r, 1.66666666666666657415e-1f);
    p = std::fma(p, r, 0.5f);
    p = std::fma(p, r, 1.0f);
    p = std::fma(p, r, 1.0f);
    const int ni = static_cast<int>(nf);  // |nf| <= 150: in range
    // The three scalings of kernel_exp, each computed with an in-range exponent, one selected.
    const float big = p * pow2i(127) * 2.0f;
    const float tiny = (p * pow2i(ni < -126 ? ni + 64 : 0)) * pow2i(-64);
    const float normal = p * pow2i(ni > 127 ? 127 : (ni < -126 ? -126 : ni));
    const float v = ni > 127 ? big : (ni < -126 ? tiny : normal);
    y[i] = nan ? xi : (over ? HUGE_VALF : (under ? 0.0f : v));
  }
}

}  // namespace pao::detail

// The portable part of pao's SIMD layer (simd/x86.hpp holds what has no portable spelling):
// fixed-width vectors for the CPU kernels' hot loops (GCC/Clang vector extensions), lane sums and
// maxima in a fixed order, and Simd<T>, the widest vector the build targets for T (AVX-512,
// AVX2 + FMA, or one scalar lane). Each lane does exactly the IEEE operation a scalar loop would
// (fma is exactly rounded), so results do not depend on the ISA the compiler targets: only speed does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "simd/x86_intrinsics.hpp"

namespace pao::detail {

using f64x8 = double __attribute__((vector_size(64)));
using f32x8 = float __attribute__((vector_size(32)));
using f32x16 = float __attribute__((vector_size(64)));
using f64x4 = double __attribute__((vector_size(32)));

template <typename V, typename T>
inline V load_vec(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T>
inline void store_vec(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
/// Lane-wise fused multiply-add (one rounding per lane). The intrinsics are the same operation;
/// GCC keeps a lane loop in memory, so they are spelled out where the ISA has them.
template <typename V>
inline V fma_vec(V a, V b, V c) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<V, f64x8>) return _mm512_fmadd_pd(a, b, c);
  if constexpr (std::is_same_v<V, f32x16>) return _mm512_fmadd_ps(a, b, c);
#endif
#if defined(__FMA__) && defined(__AVX__)
  if constexpr (std::is_same_v<V, f32x8>) return _mm256_fmadd_ps(a, b, c);
  if constexpr (std::is_same_v<V, f64x4>) return _mm256_fmadd_pd(a, b, c);
#endif
  constexpr int kLanes = sizeof(V) / sizeof(a[0]);
  V r;
  for (int i = 0; i < kLanes; ++i) r[i] = std::fma(a[i], b[i], c[i]);  // fmaf for float lanes
  return r;
}
/// Broadcast of a scalar (x - 0 is x exactly, -0 included; GCC broadcasts the scalar operand).
template <typename V, typename T>
inline V splat(T x) {
  return x - V{};
}

/// Σ x[i]: element i added into lane i % 8 in index order, then the lanes summed from lane 0.
inline double sum_in_8_lanes(const double* x, std::int64_t n) {
  f64x8 lanes = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) lanes += load_vec<f64x8>(x + i);
  for (std::int64_t j = 0; i + j < n; ++j) lanes[j] += x[i + j];
  double sum = 0.0;
  for (int j = 0; j < 8; ++j) sum += lanes[j];
  return sum;
}

/// The largest of x[0..n) that is not NaN (-inf if none): std::max's rule, lane by lane.
inline double max_in_8_lanes(const double* x, std::int64_t n) {
  constexpr double kNegInf = -__builtin_inf();
  f64x8 lanes = splat<f64x8>(kNegInf);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const f64x8 v = load_vec<f64x8>(x + i);
    lanes = lanes < v ? v : lanes;
  }
  double m = kNegInf;
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  for (int j = 0; j < 8; ++j) m = m < lanes[j] ? lanes[j] : m;
  return m;
}

/// The vector unit the kernels' tiled loops are written for: T's widest native vector, or one
/// scalar lane. fma is exactly rounded, so every choice gives the same bits.
template <typename T>
struct Simd {
  using reg = T;
  static constexpr std::int32_t kLanes = 1;
  static reg load(const T* p) { return *p; }
  static void store(T* p, reg v) { *p = v; }
  static reg set1(T v) { return v; }
  static reg mul(reg a, reg b) { return a * b; }
  static reg fma(reg a, reg b, reg c) { return std::fma(a, b, c); }
};

/// Simd<T> on a vector type V of T.
template <typename T, typename V>
struct SimdOf {
  using reg = V;
  static constexpr std::int32_t kLanes = static_cast<std::int32_t>(sizeof(V) / sizeof(T));
  static reg load(const T* p) { return load_vec<V>(p); }
  static void store(T* p, reg v) { store_vec(p, v); }
  static reg set1(T v) { return splat<V>(v); }
  static reg mul(reg a, reg b) { return a * b; }
  static reg fma(reg a, reg b, reg c) { return fma_vec(a, b, c); }
};
#if defined(__AVX512F__)
template <>
struct Simd<float> : SimdOf<float, f32x16> {};
template <>
struct Simd<double> : SimdOf<double, f64x8> {};
#elif defined(__AVX2__) && defined(__FMA__)
template <>
struct Simd<float> : SimdOf<float, f32x8> {};
template <>
struct Simd<double> : SimdOf<double, f64x4> {};
#endif

}  // namespace pao::detail

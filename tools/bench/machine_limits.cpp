// Triad bandwidth and FMA peaks.
#include "machine_limits.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "pao/numerics/formats.hpp"
#include "simd/x86_intrinsics.hpp"

namespace pao::bench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double triad_gb_per_s() {
  const std::size_t n = std::size_t{1} << 25;  // 3 x 256 MiB of doubles
  std::vector<double> a(n), b(n), c(n);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0 + static_cast<double>(i % 7);
    c[i] = 2.0;
  }
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    best = std::min(best, seconds_since(t0));
  }
  volatile double sink = a[n / 2];
  (void)sink;
  return 3.0 * static_cast<double>(n) * sizeof(double) / best / 1e9;
}

/// 16 independent chains of `lanes`-wide fma: enough to cover FMA latency x ports.
template <typename T>
double fma_gflops() {
  constexpr int kChains = 16, kLanes = 64 / sizeof(T);
  const long iters = 4'000'000;
  double best = 1e30;
  double flops = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
      alignas(64) T acc[kChains][kLanes];
      for (int c = 0; c < kChains; ++c)
        for (int l = 0; l < kLanes; ++l) acc[c][l] = static_cast<T>(c + l) * T(1e-3);
      const T mul = T(0.999999), add = T(1e-7);
      for (long i = 0; i < iters; ++i)
        for (int c = 0; c < kChains; ++c)
#pragma omp simd
          for (int l = 0; l < kLanes; ++l) acc[c][l] = std::fma(acc[c][l], mul, add);
      T s = 0;
      for (int c = 0; c < kChains; ++c)
        for (int l = 0; l < kLanes; ++l) s += acc[c][l];
      total += static_cast<double>(s);
    }
    volatile double sink = total;
    (void)sink;
    best = std::min(best, seconds_since(t0));
    flops = 2.0 * kChains * kLanes * static_cast<double>(iters) * omp_get_max_threads();
  }
  return flops / best / 1e9;
}

/// f16 round trips per second: 16 independent chains of x = round_to_f16(x) + c, with the
/// widest conversion instructions the build targets (the fused kernel loops use the same ones).
double f16_roundings_per_s() {
  const long iters = 2'000'000;
  constexpr int kChains = 16;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
#if defined(__AVX512F__)
      __m512 x[kChains];
      for (int c = 0; c < kChains; ++c) x[c] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(c));
      const __m512 step = _mm512_set1_ps(1e-3f);
      for (long i = 0; i < iters; ++i)
        for (int c = 0; c < kChains; ++c)
          x[c] = _mm512_add_ps(_mm512_cvtph_ps(_mm512_cvtps_ph(x[c], _MM_FROUND_TO_NEAREST_INT)), step);
      for (int c = 0; c < kChains; ++c) total += static_cast<double>(_mm512_reduce_add_ps(x[c]));
#else
      float x[kChains][16];
      for (int c = 0; c < kChains; ++c)
        for (int l = 0; l < 16; ++l) x[c][l] = 1.0f + 0.001f * static_cast<float>(c);
      for (long i = 0; i < iters; ++i)
        for (int c = 0; c < kChains; ++c)
          for (int l = 0; l < 16; ++l) x[c][l] = round_to_f16(x[c][l]) + 1e-3f;
      for (int c = 0; c < kChains; ++c) total += static_cast<double>(x[c][0]);
#endif
    }
    volatile double sink = total;
    (void)sink;
    best = std::min(best, seconds_since(t0));
  }
  return 16.0 * kChains * static_cast<double>(iters) * omp_get_max_threads() / best;
}

}  // namespace

MachineLimits measure_machine_limits() {
  MachineLimits m;
  m.threads = omp_get_max_threads();
  m.triad_gb_per_s = triad_gb_per_s();
  m.fp32_gflops = fma_gflops<float>();
  m.fp64_gflops = fma_gflops<double>();
  m.f16_roundings_per_s = f16_roundings_per_s();
  return m;
}

}  // namespace pao::bench

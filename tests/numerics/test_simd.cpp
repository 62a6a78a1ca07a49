// The SIMD layer (lib/src/simd/) computes lane by lane exactly what the scalar definitions of
// pao/numerics/formats.hpp compute: its f16 / bf16 roundings (NaN payloads made canonical
// included), and Simd<T>'s multiply and fma. White-box: the layer is private to the lib.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "pao/core/random.hpp"
#include "pao/numerics/formats.hpp"
#include "simd/vec.hpp"
#include "simd/x86.hpp"
#include "support/bits.hpp"

namespace {

using pao::test::f32_bits;
using pao::test::f32_from_bits;

/// Specials (signed zeros, infinities, NaNs with and without payloads, f16 / bf16 ties and
/// overflow midpoints, subnormals of every format) and random floats of every exponent.
std::vector<float> inputs() {
  std::vector<float> v;
  for (std::uint32_t u :
       {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
        0xFFBFFFFFu, 0x7FA12345u, 0x7F7FFFFFu, 0x00000001u, 0x807FFFFFu, 0x3F808000u, 0x3F818000u,
        0x3F807FFFu, 0x7F7F8000u, 0x477FF000u, 0x477FEFFFu, 0x33000000u, 0x33000001u, 0x387FC000u})
    v.push_back(f32_from_bits(u));
  pao::Rng rng(7);
  for (int i = 0; i < 4096; ++i) {
    const auto u = static_cast<std::uint32_t>(rng.below(std::uint64_t{1} << 32));
    v.push_back(f32_from_bits(u));
    v.push_back(f32_from_bits((u & 0xFFFF0000u) | 0x8000u));  // a bf16 tie
    v.push_back(f32_from_bits((u & 0xFFFFE000u) | 0x1000u));  // an f16 tie (normal range)
  }
  while (v.size() % 16 != 0) v.push_back(1.0f);
  return v;
}

}  // namespace

TEST_CASE("simd: f16 and bf16 roundings of 8 and 16 lanes equal the scalar definitions, NaN included") {
  const auto x = inputs();
  int checked = 0;
#if defined(__AVX512F__)
  for (std::size_t i = 0; i < x.size(); i += 16) {
    float f16[16], bf16[16];
    _mm512_storeu_ps(f16, pao::detail::round_f16_x16(_mm512_loadu_ps(x.data() + i)));
    _mm512_storeu_ps(bf16, pao::detail::round_bf16_x16(_mm512_loadu_ps(x.data() + i)));
    for (int l = 0; l < 16; ++l) {
      INFO("input bits ", f32_bits(x[i + l]));
      CHECK(f32_bits(f16[l]) == f32_bits(pao::round_to_f16(x[i + l])));
      CHECK(f32_bits(bf16[l]) == f32_bits(pao::round_to_bf16(x[i + l])));
      ++checked;
    }
  }
#endif
#if defined(__F16C__) && defined(__AVX__)
  for (std::size_t i = 0; i < x.size(); i += 8) {
    alignas(16) std::uint16_t h[8];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h),
                     pao::detail::encode_f16_x8(_mm256_loadu_ps(x.data() + i)));
    for (int l = 0; l < 8; ++l) {
      INFO("input bits ", f32_bits(x[i + l]));
      CHECK(h[l] == pao::encode_f16_from_f32(x[i + l]));
      ++checked;
    }
  }
#endif
  if (checked == 0) MESSAGE("this build targets no F16C / AVX-512: only the scalar definitions exist");
  // The scalar rule the vectors follow: canonical quiet NaN with the input's sign.
  CHECK(pao::encode_bf16_from_f32(f32_from_bits(0x7FA12345u)) == 0x7FC0);
  CHECK(pao::encode_bf16_from_f32(f32_from_bits(0xFFBFFFFFu)) == 0xFFC0);
  CHECK(pao::encode_f16_from_f32(f32_from_bits(0x7FA12345u)) == 0x7E00);
}

TEST_CASE("simd: Simd<T> multiplies and fmas as the scalar operations, in every lane") {
  using pao::detail::Simd;
  const auto x = inputs();
  std::vector<float> a(x.begin(), x.end()), b(a.rbegin(), a.rend());
  constexpr int L = Simd<float>::kLanes;
  for (std::size_t i = 0; i + 3 * L <= a.size(); i += L) {
    float prod[L], fma[L];
    Simd<float>::store(prod, Simd<float>::mul(Simd<float>::load(&a[i]), Simd<float>::load(&b[i])));
    Simd<float>::store(fma, Simd<float>::fma(Simd<float>::load(&a[i]), Simd<float>::load(&b[i]),
                                             Simd<float>::set1(a[i + 2 * L])));
    for (int l = 0; l < L; ++l) {
      const float p = a[i + l] * b[i + l], f = std::fma(a[i + l], b[i + l], a[i + 2 * L]);
      CHECK((f32_bits(prod[l]) == f32_bits(p) || (std::isnan(prod[l]) && std::isnan(p))));
      CHECK((f32_bits(fma[l]) == f32_bits(f) || (std::isnan(fma[l]) && std::isnan(f))));
    }
  }
}

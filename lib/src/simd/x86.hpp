// The x86 part of pao's SIMD layer (simd/vec.hpp is the portable part): what has no portable
// spelling. Each function computes exactly what its scalar definition computes, lane by lane:
//   - f16 / bf16 roundings of 8 (F16C) or 16 (AVX-512) floats, to bits or back to float, with
//     pao/numerics/formats.hpp's rounding and NaN rule (the canonical quiet NaN with the input's
//     sign); the element codecs, the tile loaders and the fused decode loops all use these;
//   - exact widening loads of stored f32 / f16 / bf16 elements (AVX-512);
//   - 16 x 16, 16 x 8 float and 8 x 8 double transposes in registers (AVX-512).
#pragma once

#include "simd/x86_intrinsics.hpp"

#if defined(__F16C__) && defined(__AVX__)
namespace pao::detail {

/// 8 floats to f16 bits: RNE with IEEE overflow (vcvtps2ph), NaN lanes made canonical first
/// (0x7FC00000 | sign converts to 0x7E00 | sign; the hardware would keep the payload).
inline __m128i encode_f16_x8(__m256 x) {
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  if (_mm256_movemask_ps(nan) != 0) {
    const __m256 canonical = _mm256_or_ps(_mm256_and_ps(x, _mm256_set1_ps(-0.0f)),
                                          _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)));
    x = _mm256_blendv_ps(x, canonical, nan);
  }
  return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/// round_to_f16 of 8 floats.
inline __m256 round_f16_x8(__m256 x) { return _mm256_cvtph_ps(encode_f16_x8(x)); }

}  // namespace pao::detail
#endif

#if defined(__AVX512F__)
#include <climits>
#include <cstddef>
#include <cstdint>

#include "pao/core/dtype.hpp"

namespace pao::detail {

/// 16 floats to f16 bits, as encode_f16_x8.
inline __m256i encode_f16_x16(__m512 x) {
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  if (nan != 0) {
    const __m512i canonical =
        _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)),
                        _mm512_set1_epi32(0x7FC00000));
    x = _mm512_mask_blend_ps(nan, x, _mm512_castsi512_ps(canonical));
  }
  return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/// round_to_f16 of 16 floats.
inline __m512 round_f16_x16(__m512 x) { return _mm512_cvtph_ps(encode_f16_x16(x)); }

/// round_to_bf16 of 16 floats: encode_bf16_from_f32's integer rounding, lane by lane, shifted back.
inline __m512 round_bf16_x16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb),
                       _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)));
  const __m512i canonical =
      _mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi32(INT32_MIN)), _mm512_set1_epi32(0x7FC00000));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                _mm512_set1_epi32(0x7F800000));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(nan, rounded, canonical));
}

/// 16 stored elements of `dt` (f32, f16, bf16) at `src`, as fp32 (exact).
template <DType dt>
inline __m512 load16_f32(const std::byte* src) {
  if constexpr (dt == DType::f16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  } else if constexpr (dt == DType::bf16) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  } else {
    static_assert(dt == DType::f32);
    return _mm512_loadu_ps(reinterpret_cast<const float*>(src));
  }
}

/// 8 stored f16 / bf16 elements at `src`, as fp64 (exact).
template <DType dt>
inline __m512d load8_f64(const std::byte* src) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  if constexpr (dt == DType::f16) {
    return _mm512_cvtps_pd(_mm256_cvtph_ps(raw));
  } else {
    static_assert(dt == DType::bf16);
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16)));
  }
}

/// r[i] holds row i on entry and column i on exit.
inline void transpose16x16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {  // per 128-bit lane: a0 b0 a1 b1 | a2 b2 a3 b3
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // lane L of r[4i + k]: rows 4i..4i+3 of column 4L + k
    r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {  // gather lane L of the four row groups: column 4L + k
    const __m512 w0 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xDD);
    const __m512 w2 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    const __m512 w3 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xDD);
    t[0 + k] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    t[8 + k] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
    t[4 + k] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

namespace transpose16x8_detail {
/// Permute indices of the three rounds (lane -> source lane of the register pair, 16 + = second).
struct Indices {
  alignas(64) std::int32_t round1[2][16], round2[2][16], round3[2][16];
};
constexpr Indices make_indices() {
  Indices x{};
  for (int k = 0; k < 2; ++k)
    for (int lane = 0; lane < 16; ++lane) {
      // Round 1: lane = a * 4 + tt, accumulator 4k + a of token tt (row tt / 2, half tt % 2).
      x.round1[k][lane] = (lane % 4 / 2) * 16 + (lane % 4 % 2) * 8 + 4 * k + lane / 4;
      // Round 2: lane = a * 8 + tt, accumulator 2k + a (of the round-1 four) of token tt.
      x.round2[k][lane] = (lane % 8 / 4) * 16 + (2 * k + lane / 8) * 4 + lane % 8 % 4;
      // Round 3: lane = token t, accumulator k (of the round-2 two).
      x.round3[k][lane] = (lane / 8) * 16 + k * 8 + lane % 8;
    }
  return x;
}
inline constexpr Indices kIndices = make_indices();
}  // namespace transpose16x8_detail

/// cols[a] = {x[t][a] for t in 0..15} from x = [16][8] floats (rows of 8 accumulators), in
/// three rounds of two-register permutes: each round doubles the tokens a register holds and
/// halves its accumulators (lane = accumulator * tokens + token within the register).
inline void transpose16x8(const float* x, __m512 (&cols)[8]) {
  using transpose16x8_detail::kIndices;
  // Round 1: rows 2i, 2i+1 (tokens 4i..4i+3) -> 4 tokens x accumulators 4h..4h+3.
  __m512 s[4][2];
  for (int h = 0; h < 2; ++h) {
    const __m512i idx = _mm512_load_si512(kIndices.round1[h]);
    for (int i = 0; i < 4; ++i)
      s[i][h] = _mm512_permutex2var_ps(_mm512_loadu_ps(x + 32 * i), idx, _mm512_loadu_ps(x + 32 * i + 16));
  }
  // Round 2: 8 tokens x accumulators 4h + 2q, 4h + 2q + 1.
  __m512 u[2][2][2];
  for (int q = 0; q < 2; ++q) {
    const __m512i idx = _mm512_load_si512(kIndices.round2[q]);
    for (int j = 0; j < 2; ++j)
      for (int h = 0; h < 2; ++h) u[j][h][q] = _mm512_permutex2var_ps(s[2 * j][h], idx, s[2 * j + 1][h]);
  }
  // Round 3: 16 tokens x one accumulator.
  for (int a = 0; a < 2; ++a) {
    const __m512i idx = _mm512_load_si512(kIndices.round3[a]);
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 2; ++q)
        cols[4 * h + 2 * q + a] = _mm512_permutex2var_ps(u[0][h][q], idx, u[1][h][q]);
  }
}

/// r[i] holds row i on entry and column i on exit (8 x 8 doubles).
inline void transpose8x8(__m512d (&r)[8]) {
  __m512d t[8], u[8];
  for (int i = 0; i < 4; ++i) {  // per 128-bit lane: a_{2i,j} a_{2i+1,j}, j even (t[2i]) or odd
    t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h)  // rows 4h..4h+3
    for (int k = 0; k < 2; ++k) {
      u[4 * h + k] = _mm512_shuffle_f64x2(t[4 * h + k], t[4 * h + 2 + k], 0x88);
      u[4 * h + 2 + k] = _mm512_shuffle_f64x2(t[4 * h + k], t[4 * h + 2 + k], 0xDD);
    }
  // u[4h + 0]: columns 0, 4; u[4h + 1]: 1, 5; u[4h + 2]: 2, 6; u[4h + 3]: 3, 7 (rows 4h..4h+3).
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f64x2(u[k], u[4 + k], 0x88);
    r[4 + k] = _mm512_shuffle_f64x2(u[k], u[4 + k], 0xDD);
  }
}

}  // namespace pao::detail

#endif

// Runtime-dtype element access and bulk conversions (see pao/numerics/element.hpp). The scalar codecs
// of pao/numerics/formats.hpp define every result; the bulk paths here only make them fast: F16C /
// AVX-512 for f16 and fp8 (through f16 bits), shifts for bf16, 256-entry tables for the fp8
// tails and for builds without AVX-512. Loads and stores go through memcpy so callers may pass
// unaligned pointers into raw byte buffers.
#include "pao/numerics/element.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pao/core/error.hpp"
#include "pao/numerics/formats.hpp"
#include "simd/x86_intrinsics.hpp"

namespace pao {
namespace {

template <typename T>
T load(const void* p, std::size_t i = 0) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(void* p, std::size_t i, T v) {
  std::memcpy(static_cast<unsigned char*>(p) + i * sizeof(T), &v, sizeof(T));
}

// Round to nearest, ties to even, independent of the floating-point environment's mode.
double round_half_even(double v) {
  const double fl = std::floor(v);
  const double diff = v - fl;  // exact
  if (diff > 0.5) return fl + 1.0;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

// Rounds v for an integer dtype whose range is [lo, hi_exclusive) (bounds exact in double).
double to_integer(DType t, double v, double lo, double hi_exclusive) {
  require(!std::isnan(v), "cannot store NaN as ", dtype_name(t));
  const double r = round_half_even(v);
  require(r >= lo && r < hi_exclusive, "value ", v, " out of range of ", dtype_name(t));
  return r;
}

// Decode table for the 256 codes of each fp8 flavour, built once on first use.
template <float (*Decode)(std::uint8_t)>
const std::array<float, 256>& fp8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = Decode(static_cast<std::uint8_t>(c));
    return t;
  }();
  return table;
}

void decode_fp8_to_f32(DType t, const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  const bool e4m3 = t == DType::fp8_e4m3;
  std::size_t i = 0;
#if defined(__AVX512F__)
  // Both flavours go through f16 bits and the hardware f16 -> f32 conversion, which never
  // meets a float subnormal, so MXCSR's DAZ/FTZ cannot change the result:
  //  - e5m2 is exactly the top byte of an f16 (inf and NaN included);
  //  - e4m3 fields placed in f16 (S.EEEE.MMM -> S.0EEEE.MMM0000) read as 2^-8 times the value
  //    (bias 15 vs 7), subnormals included; scaling by 2^8 is exact. S.1111.111 is NaN.
  const __m512i sign_mask = _mm512_set1_epi32(0x80);
  const __m512i mag_mask = _mm512_set1_epi32(0x7F);
  const __m512 scale = _mm512_set1_ps(256.0f);
  const __m512i nan_bits = _mm512_set1_epi32(0x7FF00000);  // = decode_fp8_e4m3(0x7F)
  for (; i + 16 <= n; i += 16) {
    const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    __m512 f;
    if (e4m3) {
      const __m512i mag = _mm512_and_si512(b, mag_mask);
      const __m512i sign = _mm512_and_si512(b, sign_mask);
      const __m512i h = _mm512_or_si512(_mm512_slli_epi32(sign, 8), _mm512_slli_epi32(mag, 7));
      f = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(h)), scale);
      const __mmask16 nan = _mm512_cmpeq_epi32_mask(mag, mag_mask);
      const __m512i nan_value = _mm512_or_si512(nan_bits, _mm512_slli_epi32(sign, 24));
      f = _mm512_mask_blend_ps(nan, f, _mm512_castsi512_ps(nan_value));
    } else {
      const __m256i h = _mm512_cvtepi32_epi16(_mm512_slli_epi32(b, 8));
      f = _mm512_cvtph_ps(h);
    }
    _mm512_storeu_ps(dst + i, f);
  }
#endif
  const float* table = (e4m3 ? fp8_table<decode_fp8_e4m3>() : fp8_table<decode_fp8_e5m2>()).data();
  for (; i < n; ++i) dst[i] = table[s[i]];
}

void decode_f16_to_f32(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const unsigned char*>(src);
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 2 * i));
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = decode_f16(load<std::uint16_t>(s, i));
}

void decode_bf16_to_f32(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t u = std::uint32_t{load<std::uint16_t>(s, i)} << 16;
    std::memcpy(dst + i, &u, sizeof u);
  }
}

// f32 -> bf16 by the integer RNE trick, branch-free so that it vectorizes. Identical to
// encode_bf16_from_f32 for every input (overflow carries into the inf code; float subnormals
// round like any other value; NaN becomes the canonical code with its sign).
inline std::uint16_t bf16_from_f32_fast(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const std::uint32_t nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
  return static_cast<std::uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

void encode_f32_to_f16(const float* src, void* dst, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  std::size_t i = 0;
  // The hardware conversion is RNE with IEEE overflow, like encode_f16, but keeps NaN
  // payloads; a block holding a NaN is redone by the scalar path for the canonical code.
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(src + i);
    if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) != 0) {
      for (std::size_t j = i; j < i + 16; ++j) store(d, j, encode_f16_from_f32(src[j]));
      continue;
    }
    const __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 2 * i), h);
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)) != 0) {
      for (std::size_t j = i; j < i + 8; ++j) store(d, j, encode_f16_from_f32(src[j]));
      continue;
    }
    const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i), h);
  }
#endif
  for (; i < n; ++i) store(d, i, encode_f16_from_f32(src[i]));
}

// f64 -> f16 through a float rounded to odd: the value truncated to float, its last bit set when
// that was inexact. A float keeps 13 more bits than f16, so the RNE conversion of that float to
// f16 equals the direct rounding of the double (rounding to odd first is innocuous with two or
// more extra bits), overflow and the f16 subnormals included. NaN blocks take the scalar path.
void encode_f64_to_f16(const double* src, void* dst, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) {
    const __m512d x = _mm512_loadu_pd(src + i);
    if (_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q) != 0) {
      for (std::size_t j = i; j < i + 8; ++j) store(d, j, encode_f16(src[j]));
      continue;
    }
    const __m256 truncated = _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact = _mm512_cmp_pd_mask(_mm512_cvtps_pd(truncated), x, _CMP_NEQ_OQ);
    const __m256i bits = _mm256_castps_si256(truncated);
    const __m256i odd = _mm256_mask_or_epi32(bits, inexact, bits, _mm256_set1_epi32(1));
    const __m128i h =
        _mm256_cvtps_ph(_mm256_castsi256_ps(odd), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i), h);
  }
#endif
  for (; i < n; ++i) store(d, i, encode_f16(src[i]));
}

}  // namespace

double decode_element(DType t, const void* p) {
  switch (t) {
    case DType::f64:
      return load<double>(p);
    case DType::f32:
      return load<float>(p);
    case DType::f16:
      return decode_f16(load<std::uint16_t>(p));
    case DType::bf16:
      return decode_bf16(load<std::uint16_t>(p));
    case DType::fp8_e4m3:
      return decode_fp8_e4m3(load<std::uint8_t>(p));
    case DType::fp8_e5m2:
      return decode_fp8_e5m2(load<std::uint8_t>(p));
    case DType::i32:
      return static_cast<double>(load<std::int32_t>(p));
    case DType::i64:
      return static_cast<double>(load<std::int64_t>(p));
    case DType::u8:
      return static_cast<double>(load<std::uint8_t>(p));
  }
  fail("decode_element: unknown dtype ", static_cast<int>(t));
}

void encode_element(DType t, double v, void* p) {
  switch (t) {
    case DType::f64:
      store(p, 0, v);
      return;
    case DType::f32:
      store(p, 0, static_cast<float>(v));
      return;
    case DType::f16:
      store(p, 0, encode_f16(v));
      return;
    case DType::bf16:
      store(p, 0, encode_bf16(v));
      return;
    case DType::fp8_e4m3:
      store(p, 0, encode_fp8_e4m3(v));
      return;
    case DType::fp8_e5m2:
      store(p, 0, encode_fp8_e5m2(v));
      return;
    case DType::i32:
      store(p, 0, static_cast<std::int32_t>(to_integer(t, v, -0x1p31, 0x1p31)));
      return;
    case DType::i64:
      store(p, 0, static_cast<std::int64_t>(to_integer(t, v, -0x1p63, 0x1p63)));
      return;
    case DType::u8:
      store(p, 0, static_cast<std::uint8_t>(to_integer(t, v, 0.0, 256.0)));
      return;
  }
  fail("encode_element: unknown dtype ", static_cast<int>(t));
}

double round_to_dtype(DType t, double v) {
  unsigned char buf[8];
  encode_element(t, v, buf);
  return decode_element(t, buf);
}

void decode_to_f32(DType t, const void* src, float* dst, std::size_t n) {
  switch (t) {
    case DType::f32:
      if (n != 0) std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::f64:
      for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(load<double>(src, i));
      return;
    case DType::f16:
      decode_f16_to_f32(src, dst, n);
      return;
    case DType::bf16:
      decode_bf16_to_f32(src, dst, n);
      return;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      decode_fp8_to_f32(t, src, dst, n);
      return;
    case DType::i32:
    case DType::i64:
    case DType::u8:
      for (std::size_t i = 0; i < n; ++i) {
        dst[i] =
            static_cast<float>(decode_element(t, static_cast<const unsigned char*>(src) + i * dtype_size(t)));
      }
      return;
  }
  fail("decode_to_f32: unknown dtype ", static_cast<int>(t));
}

void decode_to_f64(DType t, const void* src, double* dst, std::size_t n) {
  switch (t) {
    case DType::f64:
      if (n != 0) std::memcpy(dst, src, n * sizeof(double));
      return;
    case DType::f32:
      for (std::size_t i = 0; i < n; ++i) dst[i] = load<float>(src, i);
      return;
    case DType::f16:
    case DType::bf16:
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: {
      // Through an L1-resident float block: the f32 decoders are the vectorized ones, and
      // every value of these formats is a float.
      constexpr std::size_t kBlock = 256;
      float buf[kBlock];
      const auto* s = static_cast<const unsigned char*>(src);
      const std::size_t width = dtype_size(t);
      for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        decode_to_f32(t, s + width * i, buf, m);
        for (std::size_t j = 0; j < m; ++j) dst[i + j] = buf[j];
      }
      return;
    }
    case DType::i32:
    case DType::i64:
    case DType::u8:
      for (std::size_t i = 0; i < n; ++i) {
        dst[i] = decode_element(t, static_cast<const unsigned char*>(src) + i * dtype_size(t));
      }
      return;
  }
  fail("decode_to_f64: unknown dtype ", static_cast<int>(t));
}

void encode_from_f32(DType t, const float* src, void* dst, std::size_t n) {
  switch (t) {
    case DType::f32:
      if (n != 0) std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::f64:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, static_cast<double>(src[i]));
      return;
    case DType::f16:
      encode_f32_to_f16(src, dst, n);
      return;
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, bf16_from_f32_fast(src[i]));
      return;
    case DType::fp8_e4m3:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, encode_fp8_e4m3_from_f32(src[i]));
      return;
    case DType::fp8_e5m2:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, encode_fp8_e5m2_from_f32(src[i]));
      return;
    case DType::i32:
    case DType::i64:
    case DType::u8:
      for (std::size_t i = 0; i < n; ++i) {
        encode_element(t, src[i], static_cast<unsigned char*>(dst) + i * dtype_size(t));
      }
      return;
  }
  fail("encode_from_f32: unknown dtype ", static_cast<int>(t));
}

void encode_from_f64(DType t, const double* src, void* dst, std::size_t n) {
  switch (t) {
    case DType::f64:
      if (n != 0) std::memcpy(dst, src, n * sizeof(double));
      return;
    case DType::f32:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, static_cast<float>(src[i]));
      return;
    case DType::f16:
      encode_f64_to_f16(src, dst, n);
      return;
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, encode_bf16(src[i]));
      return;
    case DType::fp8_e4m3:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, encode_fp8_e4m3(src[i]));
      return;
    case DType::fp8_e5m2:
      for (std::size_t i = 0; i < n; ++i) store(dst, i, encode_fp8_e5m2(src[i]));
      return;
    case DType::i32:
    case DType::i64:
    case DType::u8:
      for (std::size_t i = 0; i < n; ++i) {
        encode_element(t, src[i], static_cast<unsigned char*>(dst) + i * dtype_size(t));
      }
      return;
  }
  fail("encode_from_f64: unknown dtype ", static_cast<int>(t));
}

}  // namespace pao

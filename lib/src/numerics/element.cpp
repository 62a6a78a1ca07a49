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
#include <limits>
#include <type_traits>
#include <utility>

#include "pao/core/error.hpp"
#include "pao/numerics/dtype_codec.hpp"
#include "pao/numerics/formats.hpp"
#include "simd/x86.hpp"

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

}  // namespace

template <DType dt, typename T>
T IntegerCodec<dt, T>::encode(double v) {
  constexpr double kLo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kHi = std::is_signed_v<T> ? -kLo : static_cast<double>(std::numeric_limits<T>::max()) + 1;
  return static_cast<T>(to_integer(dt, v, kLo, kHi));
}
template struct IntegerCodec<DType::i32, std::int32_t>;
template struct IntegerCodec<DType::i64, std::int64_t>;
template struct IntegerCodec<DType::u8, std::uint8_t>;
template struct IntegerCodec<DType::i8, std::int8_t>;

namespace {

// Decode table for the 256 codes of an 8-bit float format, built once on first use.
template <DType dt>
const std::array<float, 256>& fp8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = DTypeCodec<dt>::decode(static_cast<std::uint8_t>(c));
    return t;
  }();
  return table;
}

// An 8-bit float format: AVX-512 for the two fp8 flavours it knows, the table for the tail (and
// for any other format).
template <DType dt>
void decode_fp8_to_f32(const void* src, float* dst, std::size_t n) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  std::size_t i = 0;
#if defined(__AVX512F__)
  constexpr bool e4m3 = dt == DType::fp8_e4m3;
  if constexpr (e4m3 || dt == DType::fp8_e5m2) {
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
      if constexpr (e4m3) {
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
  }
#endif
  const float* table = fp8_table<dt>().data();
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

void encode_f32_to_f16(const float* src, void* dst, std::size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 2 * i),
                        detail::encode_f16_x16(_mm512_loadu_ps(src + i)));
#endif
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i), detail::encode_f16_x8(_mm256_loadu_ps(src + i)));
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

/// fn(std::integral_constant<DType, t>{}): the runtime dtype as a compile-time one, for every row
/// of kDTypes.
template <typename Fn>
decltype(auto) visit_dtype(DType t, const char* what, Fn&& fn) {
  using R = decltype(fn(std::integral_constant<DType, DType::f32>{}));
  return [&]<std::size_t... I>(std::index_sequence<I...>)->R {
    constexpr std::size_t kNone = kDTypes.size();
    std::size_t row = kNone;
    (void)((t == kDTypes[I].type ? (row = I, true) : false) || ...);  // the first row of t
    require(row != kNone, what, ": unknown dtype ", static_cast<int>(t));
    if constexpr (std::is_void_v<R>) {
      (void)((row == I ? (fn(std::integral_constant<DType, kDTypes[I].type>{}), true) : false) || ...);
    } else {
      R r{};
      (void)((row == I ? (r = fn(std::integral_constant<DType, kDTypes[I].type>{}), true) : false) || ...);
      return r;
    }
  }
  (std::make_index_sequence<kDTypes.size()>());
}

/// The narrow float formats (f16, bf16, fp8): every value is a float.
template <DType dt>
constexpr bool is_float_format = is_floating(dt) && dtype_size(dt) <= 2;

/// n elements of dtype dt at src, decoded into Dst (float or double).
template <DType dt, typename Dst>
void decode_run(const void* src, Dst* dst, std::size_t n) {
  using C = DTypeCodec<dt>;
  if constexpr (std::is_same_v<typename C::Bits, Dst>) {
    if (n != 0) std::memcpy(dst, src, n * sizeof(Dst));
  } else if constexpr (std::is_same_v<Dst, float> && dt == DType::f16) {
    decode_f16_to_f32(src, dst, n);
  } else if constexpr (std::is_same_v<Dst, float> && dtype_size(dt) == 1 && is_float_format<dt>) {
    decode_fp8_to_f32<dt>(src, dst, n);
  } else if constexpr (std::is_same_v<Dst, double> && is_float_format<dt>) {
    // Through an L1-resident float block: the f32 decoders are the vectorized ones, and every
    // value of these formats is a float.
    constexpr std::size_t kBlock = 256;
    float buf[kBlock];
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t i = 0; i < n; i += kBlock) {
      const std::size_t m = std::min(kBlock, n - i);
      decode_run<dt, float>(s + sizeof(typename C::Bits) * i, buf, m);
      for (std::size_t j = 0; j < m; ++j) dst[i + j] = buf[j];
    }
  } else {  // f32 <-> f64, bf16 (a shift), the integers
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(C::decode(load<typename C::Bits>(src, i)));
  }
}

/// n values of Src (float or double) encoded as dtype dt at dst, element by element as
/// encode_element would (so the integer dtypes throw on out-of-range values).
template <DType dt, typename Src>
void encode_run(const Src* src, void* dst, std::size_t n) {
  using C = DTypeCodec<dt>;
  if constexpr (std::is_same_v<typename C::Bits, Src>) {
    if (n != 0) std::memcpy(dst, src, n * sizeof(Src));
  } else if constexpr (dt == DType::f16 && std::is_same_v<Src, float>) {
    encode_f32_to_f16(src, dst, n);
  } else if constexpr (dt == DType::f16) {
    encode_f64_to_f16(src, dst, n);
  } else if constexpr (std::is_integral_v<typename C::Bits>) {
    for (std::size_t i = 0; i < n; ++i) store(dst, i, C::encode(static_cast<double>(src[i])));
  } else {
    for (std::size_t i = 0; i < n; ++i) store(dst, i, C::encode(src[i]));
  }
}

}  // namespace

double decode_element(DType t, const void* p) {
  return visit_dtype(t, "decode_element", [&](auto d) {
    using C = DTypeCodec<decltype(d)::value>;
    return static_cast<double>(C::decode(load<typename C::Bits>(p)));
  });
}

void encode_element(DType t, double v, void* p) {
  visit_dtype(t, "encode_element", [&](auto d) { store(p, 0, DTypeCodec<decltype(d)::value>::encode(v)); });
}

double round_to_dtype(DType t, double v) {
  unsigned char buf[8];
  encode_element(t, v, buf);
  return decode_element(t, buf);
}

void decode_to_f32(DType t, const void* src, float* dst, std::size_t n) {
  visit_dtype(t, "decode_to_f32", [&](auto d) { decode_run<decltype(d)::value>(src, dst, n); });
}

void decode_to_f64(DType t, const void* src, double* dst, std::size_t n) {
  visit_dtype(t, "decode_to_f64", [&](auto d) { decode_run<decltype(d)::value>(src, dst, n); });
}

void encode_from_f32(DType t, const float* src, void* dst, std::size_t n) {
  visit_dtype(t, "encode_from_f32", [&](auto d) { encode_run<decltype(d)::value>(src, dst, n); });
}

void encode_from_f64(DType t, const double* src, void* dst, std::size_t n) {
  visit_dtype(t, "encode_from_f64", [&](auto d) { encode_run<decltype(d)::value>(src, dst, n); });
}

}  // namespace pao

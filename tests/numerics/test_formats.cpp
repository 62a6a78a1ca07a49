// Tests of the number-format codecs (pao/numerics/formats.hpp) and the runtime-dtype element access
// (pao/numerics/element.hpp). Every code of every narrow format is checked against an independent
// ldexp-based formula; rounding is checked at exact midpoints, against a search-based reference
// encoder, against Eigen's half/bfloat16, and for the absence of double rounding via float.
#include <doctest/doctest.h>

// Eigen 3.4's AVX / AVX-512 packet code has unused variables; keep -Werror builds clean.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"
#include "pao/numerics/formats.hpp"
#include "support/bits.hpp"

namespace {

using pao::DType;

// Independent description of each format, used only by the reference formulas below.
struct Spec {
  const char* name;
  DType dtype;
  int exp_bits;
  int man_bits;
  bool fn;        // e4m3fn: no inf, only S.1111.111 is NaN
  bool saturate;  // fp8: overflow clamps to max finite
};

constexpr Spec kF16{"f16", DType::f16, 5, 10, false, false};
constexpr Spec kBF16{"bf16", DType::bf16, 8, 7, false, false};
constexpr Spec kE4M3{"e4m3", DType::fp8_e4m3, 4, 3, true, true};
constexpr Spec kE5M2{"e5m2", DType::fp8_e5m2, 5, 2, false, true};
constexpr Spec kAll[] = {kF16, kBF16, kE4M3, kE5M2};

int num_codes(const Spec& s) { return 1 << (1 + s.exp_bits + s.man_bits); }
std::uint32_t sign_bit(const Spec& s) { return 1u << (s.exp_bits + s.man_bits); }

// The value of a code from its sign / exponent / mantissa fields.
double ref_value(const Spec& s, std::uint32_t code) {
  const int bias = (1 << (s.exp_bits - 1)) - 1;
  const bool neg = (code >> (s.exp_bits + s.man_bits)) & 1;
  const int e = static_cast<int>((code >> s.man_bits) & ((1u << s.exp_bits) - 1));
  const int m = static_cast<int>(code & ((1u << s.man_bits) - 1));
  const int e_max = (1 << s.exp_bits) - 1;
  double mag;
  if (s.fn) {
    if (e == e_max && m == (1 << s.man_bits) - 1) return std::numeric_limits<double>::quiet_NaN();
  } else if (e == e_max) {
    if (m != 0) return std::numeric_limits<double>::quiet_NaN();
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), 1 - bias - s.man_bits);
  } else {
    mag = std::ldexp(static_cast<double>((1 << s.man_bits) + m), e - bias - s.man_bits);
  }
  return neg ? -mag : mag;
}

bool ref_is_nan(const Spec& s, std::uint32_t code) { return std::isnan(ref_value(s, code)); }

std::uint32_t max_finite_code(const Spec& s) {
  return s.fn ? sign_bit(s) - 2 : (((1u << s.exp_bits) - 1) << s.man_bits) - 1;
}

// The scalar codecs, dispatched by Spec. (Returns float: a double would quiet bf16 sNaNs.)
float dec(const Spec& s, std::uint32_t code) {
  switch (s.dtype) {
    case DType::f16:
      return pao::decode_f16(static_cast<std::uint16_t>(code));
    case DType::bf16:
      return pao::decode_bf16(static_cast<std::uint16_t>(code));
    case DType::fp8_e4m3:
      return pao::decode_fp8_e4m3(static_cast<std::uint8_t>(code));
    default:
      return pao::decode_fp8_e5m2(static_cast<std::uint8_t>(code));
  }
}
std::uint32_t enc(const Spec& s, double v) {
  switch (s.dtype) {
    case DType::f16:
      return pao::encode_f16(v);
    case DType::bf16:
      return pao::encode_bf16(v);
    case DType::fp8_e4m3:
      return pao::encode_fp8_e4m3(v);
    default:
      return pao::encode_fp8_e5m2(v);
  }
}
std::uint32_t enc32(const Spec& s, float v) {
  switch (s.dtype) {
    case DType::f16:
      return pao::encode_f16_from_f32(v);
    case DType::bf16:
      return pao::encode_bf16_from_f32(v);
    case DType::fp8_e4m3:
      return pao::encode_fp8_e4m3_from_f32(v);
    default:
      return pao::encode_fp8_e5m2_from_f32(v);
  }
}

using pao::test::f32_bits;
using pao::test::f32_from_bits;
using pao::test::f64_bits;

// Reference encoder by search: the finite positive codes sorted by value, the nearest one found
// by binary search and a tie broken towards the even code. Shares nothing with the encoder.
std::uint32_t ref_encode(const Spec& s, double v) {
  const std::uint32_t sign = std::signbit(v) ? sign_bit(s) : 0;
  if (std::isnan(v)) {
    // Canonical quiet NaN: all ones for e4m3fn, else all-ones exponent + top mantissa bit.
    const std::uint32_t exp_ones = ((1u << s.exp_bits) - 1) << s.man_bits;
    return sign | (s.fn ? sign_bit(s) - 1 : exp_ones | (1u << (s.man_bits - 1)));
  }
  const double a = std::fabs(v);
  const std::uint32_t top = max_finite_code(s);
  const double max = ref_value(s, top);
  // Values beyond max: saturate (fp8), or inf when at or beyond max + ulp/2 (IEEE).
  if (a > max) {
    if (s.saturate) return sign | top;
    const double half_ulp = (max - ref_value(s, top - 1)) / 2;
    return sign | (a >= max + half_ulp ? top + 1 : top);
  }
  // Positive finite codes are ordered like their values: find the first >= a.
  std::uint32_t lo = 0, hi = top;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (ref_value(s, mid) < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (ref_value(s, lo) == a || lo == 0) return sign | lo;
  const double below = ref_value(s, lo - 1), above = ref_value(s, lo);
  const double midpoint = (below + above) / 2;  // exact in double
  if (a < midpoint) return sign | (lo - 1);
  if (a > midpoint) return sign | lo;
  return sign | (((lo - 1) & 1) == 0 ? lo - 1 : lo);
}

// Uniform integer in [0, n) from raw 32-bit draws (std distributions differ between libraries).
std::uint32_t uniform_below(std::mt19937& rng, std::uint32_t n) {
  return static_cast<std::uint32_t>((std::uint64_t{rng()} * n) >> 32);
}

// A random double with random sign, exponent in [e_lo, e_hi] and 52 random mantissa bits.
double random_double(std::mt19937& rng, int e_lo, int e_hi) {
  const std::uint64_t man = (std::uint64_t{rng()} << 20) ^ (rng() >> 12);
  const int e = e_lo + static_cast<int>(uniform_below(rng, static_cast<std::uint32_t>(e_hi - e_lo + 1)));
  const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(man & ((1ull << 52) - 1)), -52), e);
  return (rng() & 1) ? -v : v;
}

float random_float(std::mt19937& rng, int e_lo, int e_hi) {
  const std::uint32_t man = rng() & 0x7FFFFFu;
  const int e = e_lo + static_cast<int>(uniform_below(rng, static_cast<std::uint32_t>(e_hi - e_lo + 1)));
  const float v = std::ldexp(1.0f + std::ldexp(static_cast<float>(man), -23), e);
  return (rng() & 1) ? -v : v;
}

}  // namespace

TEST_CASE("formats: every code decodes to its field formula") {
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    int nan_count = 0;
    for (int c = 0; c < num_codes(s); ++c) {
      const auto code = static_cast<std::uint32_t>(c);
      const double want = ref_value(s, code);
      const double got = dec(s, code);
      if (std::isnan(want)) {
        ++nan_count;
        CHECK(std::isnan(got));
        CHECK(std::signbit(got) == ((code & sign_bit(s)) != 0));
        continue;
      }
      if (got != want) CHECK(got == want);  // only report failures: 2 x 65536 codes
      if (want == 0) CHECK(std::signbit(got) == ((code & sign_bit(s)) != 0));
    }
    if (s.fn)
      CHECK(nan_count == 2);
    else
      CHECK(nan_count == 2 * ((1 << s.man_bits) - 1));
  }
  // Spot values from the format definitions.
  CHECK(pao::decode_fp8_e4m3(0x7E) == 448.0f);
  CHECK(pao::decode_fp8_e4m3(0x01) == 0x1p-9f);
  CHECK(pao::decode_fp8_e4m3(0x08) == 0x1p-6f);
  CHECK(pao::decode_fp8_e5m2(0x7B) == 57344.0f);
  CHECK(std::isinf(pao::decode_fp8_e5m2(0x7C)));
  CHECK(pao::decode_fp8_e5m2(0x01) == 0x1p-16f);
  CHECK(pao::decode_f16(0x7BFF) == 65504.0f);
  CHECK(pao::decode_f16(0x0001) == 0x1p-24f);
  CHECK(pao::decode_bf16(0x0001) == 0x1p-133f);
  CHECK(pao::decode_bf16(0x3F80) == 1.0f);
  // e5m2 is the top byte of f16.
  for (int c = 0; c < 256; ++c) {
    const float a = pao::decode_fp8_e5m2(static_cast<std::uint8_t>(c));
    const float b = pao::decode_f16(static_cast<std::uint16_t>(c << 8));
    CHECK((f32_bits(a) == f32_bits(b) || (std::isnan(a) && std::isnan(b))));
  }
}

TEST_CASE("formats: encode(decode(code)) == code for every non-NaN code") {
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    const std::uint32_t inf_code = ((1u << s.exp_bits) - 1) << s.man_bits;
    for (int c = 0; c < num_codes(s); ++c) {
      const auto code = static_cast<std::uint32_t>(c);
      if (ref_is_nan(s, code)) continue;
      // e5m2 has inf codes but saturating encodes never produce them: inf -> max finite.
      const bool is_inf = !s.fn && (code & (sign_bit(s) - 1)) == inf_code;
      const std::uint32_t want = (is_inf && s.saturate) ? (code & sign_bit(s)) | max_finite_code(s) : code;
      const float f = static_cast<float>(dec(s, code));
      const std::uint32_t via_f64 = enc(s, static_cast<double>(f));
      const std::uint32_t via_f32 = enc32(s, f);
      if (via_f64 != want) CHECK(via_f64 == want);
      if (via_f32 != want) CHECK(via_f32 == want);
    }
    // -0 keeps its sign; so does a negative value that rounds to zero.
    CHECK(enc(s, -0.0) == sign_bit(s));
    CHECK(enc(s, 0.0) == 0u);
    CHECK(enc(s, -1e-300) == sign_bit(s));
    CHECK(enc(s, 5e-324) == 0u);
    CHECK(enc32(s, -0.0f) == sign_bit(s));
  }
}

TEST_CASE("formats: ties round to even, subnormal and overflow midpoints included") {
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    const std::uint32_t top = max_finite_code(s);
    for (std::uint32_t c = 0; c < top; ++c) {
      const double lo = ref_value(s, c), hi = ref_value(s, c + 1);
      const double mid = (lo + hi) / 2;  // exact: at most 12 significant bits
      const std::uint32_t even = (c & 1) ? c + 1 : c;
      const std::uint32_t neg = sign_bit(s);
      bool ok = enc(s, mid) == even && enc(s, -mid) == (neg | even) &&
                enc(s, std::nextafter(mid, 0.0)) == c && enc(s, std::nextafter(mid, HUGE_VAL)) == c + 1 &&
                enc(s, -std::nextafter(mid, HUGE_VAL)) == (neg | (c + 1));
      // The midpoint is a float too, so the float-source path must agree.
      ok = ok && static_cast<double>(static_cast<float>(mid)) == mid &&
           enc32(s, static_cast<float>(mid)) == even;
      if (!ok) {
        CAPTURE(c);
        CHECK(enc(s, mid) == even);
        CHECK(enc(s, -mid) == (neg | even));
        CHECK(enc(s, std::nextafter(mid, 0.0)) == c);
        CHECK(enc(s, std::nextafter(mid, HUGE_VAL)) == c + 1);
        CHECK(enc32(s, static_cast<float>(mid)) == even);
      }
    }
    // Between max finite and the next power of two (what would be the next code).
    const double max = ref_value(s, top);
    const double half_ulp = (max - ref_value(s, top - 1)) / 2;
    const double over_mid = max + half_ulp;
    CHECK(enc(s, std::nextafter(over_mid, 0.0)) == top);
    if (s.saturate) {
      CHECK(enc(s, over_mid) == top);
      CHECK(enc(s, -over_mid) == (sign_bit(s) | top));
    } else {
      // IEEE: max has an odd mantissa, so the tie goes up, to inf.
      CHECK(enc(s, over_mid) == top + 1);
      CHECK(enc(s, -over_mid) == (sign_bit(s) | (top + 1)));
    }
  }
  // Concrete midpoints.
  CHECK(pao::encode_f16(0x1p-25) == 0x0000);      // half the min subnormal -> 0
  CHECK(pao::encode_f16(3 * 0x1p-25) == 0x0002);  // 1.5 quanta -> 2 quanta
  CHECK(pao::encode_f16(65520.0) == 0x7C00);      // max + ulp/2 -> inf
  CHECK(pao::encode_fp8_e4m3(0x1p-10) == 0x00);
  CHECK(pao::encode_fp8_e4m3(3 * 0x1p-10) == 0x02);
  CHECK(pao::encode_fp8_e4m3(464.0) == 0x7E);  // max + ulp/2 -> max
  CHECK(pao::encode_fp8_e5m2(61440.0) == 0x7B);
  CHECK(pao::encode_fp8_e5m2(0x1p-17) == 0x00);
  CHECK(pao::encode_bf16(1.0 + 0x1p-8) == 0x3F80);
  CHECK(pao::encode_bf16(1.0 + 3 * 0x1p-8) == 0x3F82);
  CHECK(pao::encode_bf16(0x1p-134) == 0x0000);
  CHECK(pao::encode_bf16(3 * 0x1p-134) == 0x0002);
}

TEST_CASE("formats: overflow saturates for fp8, goes to inf for f16/bf16; NaN stays NaN") {
  const double inf = HUGE_VAL;
  for (double v : {1e9, inf, 1e300, 464.0, 500.0, 896.0, std::numeric_limits<double>::max()}) {
    CAPTURE(v);
    CHECK(pao::encode_fp8_e4m3(v) == 0x7E);
    CHECK(pao::encode_fp8_e4m3(-v) == 0xFE);
  }
  for (double v : {1e9, inf, 61440.0, 65536.0, 1e300}) {
    CAPTURE(v);
    CHECK(pao::encode_fp8_e5m2(v) == 0x7B);
    CHECK(pao::encode_fp8_e5m2(-v) == 0xFB);
  }
  CHECK(pao::encode_fp8_e4m3_from_f32(std::numeric_limits<float>::infinity()) == 0x7E);
  CHECK(pao::encode_fp8_e5m2_from_f32(-std::numeric_limits<float>::max()) == 0xFB);
  CHECK(pao::encode_fp8_e4m3(447.9) == 0x7E);
  CHECK(pao::encode_fp8_e4m3(463.99) == 0x7E);
  for (double v : {1e9, inf, 65520.0, 1e300}) {
    CAPTURE(v);
    CHECK(pao::encode_f16(v) == 0x7C00);
    CHECK(pao::encode_f16(-v) == 0xFC00);
  }
  CHECK(pao::encode_f16(65519.99) == 0x7BFF);
  CHECK(pao::encode_bf16(1e39) == 0x7F80);
  CHECK(pao::encode_bf16(-inf) == 0xFF80);
  CHECK(pao::encode_bf16(std::numeric_limits<double>::max()) == 0x7F80);
  CHECK(pao::encode_bf16_from_f32(std::numeric_limits<float>::max()) == 0x7F80);
  // NaN: canonical quiet NaN, sign preserved.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(pao::encode_f16(nan) == 0x7E00);
  CHECK(pao::encode_f16(-nan) == 0xFE00);
  CHECK(pao::encode_bf16(nan) == 0x7FC0);
  CHECK(pao::encode_bf16(-nan) == 0xFFC0);
  CHECK(pao::encode_fp8_e4m3(nan) == 0x7F);
  CHECK(pao::encode_fp8_e4m3(-nan) == 0xFF);
  CHECK(pao::encode_fp8_e5m2(nan) == 0x7E);
  CHECK(pao::encode_fp8_e5m2(-nan) == 0xFE);
  CHECK(pao::encode_f16_from_f32(std::numeric_limits<float>::signaling_NaN()) == 0x7E00);
  CHECK(std::isnan(pao::round_to_f16(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("formats: one rounding from double, never through float") {
  // d lies above a format midpoint by far less than half a float ulp, so (float)d is the
  // midpoint itself and rounding that tie would pick the even (lower) code.
  struct Case {
    const Spec* s;
    double midpoint;
    std::uint32_t below, above;
  };
  const Case cases[] = {
      {&kF16, 1.0 + 0x1p-11, 0x3C00, 0x3C01},
      {&kF16, 0x1p-25, 0x0000, 0x0001},      // subnormal: half the smallest subnormal
      {&kF16, 5 * 0x1p-25, 0x0002, 0x0003},  // between subnormals 2 and 3 quanta
      {&kBF16, 1.0 + 0x1p-8, 0x3F80, 0x3F81},
      {&kBF16, 0x1p-134, 0x0000, 0x0001},
      {&kE4M3, 1.0 + 0x1p-4, 0x38, 0x39},
      {&kE4M3, 0x1p-10, 0x00, 0x01},
      {&kE5M2, 1.0 + 0x1p-3, 0x3C, 0x3D},
      {&kE5M2, 0x1p-17, 0x00, 0x01},
  };
  for (const Case& c : cases) {
    const std::string fmt_name = c.s->name;
    CAPTURE(fmt_name);
    CAPTURE(c.midpoint);
    const double d = c.midpoint * (1.0 + 0x1p-40);
    REQUIRE(static_cast<double>(static_cast<float>(d)) == c.midpoint);
    CHECK(enc(*c.s, d) == c.above);
    CHECK(enc(*c.s, static_cast<double>(static_cast<float>(d))) == c.below);
    CHECK(enc(*c.s, -d) == (sign_bit(*c.s) | c.above));
    const double e = c.midpoint * (1.0 - 0x1p-40);
    CHECK(enc(*c.s, e) == c.below);
  }
}

TEST_CASE("formats: random doubles and floats match the search-based reference encoder") {
  std::mt19937 rng(12345);
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    const int bias = (1 << (s.exp_bits - 1)) - 1;
    // Exponents from well below the smallest subnormal to beyond the overflow threshold.
    const int e_lo = 1 - bias - s.man_bits - 3, e_hi = bias + 3;
    for (int i = 0; i < 20000; ++i) {
      const double d = random_double(rng, e_lo, e_hi);
      const std::uint32_t got = enc(s, d), want = ref_encode(s, d);
      if (got != want) {
        CAPTURE(d);
        CHECK(got == want);
      }
      const float f = random_float(rng, e_lo, e_hi);
      const std::uint32_t got32 = enc32(s, f), want32 = ref_encode(s, f);
      if (got32 != want32) {
        CAPTURE(f);
        CHECK(got32 == want32);
      }
    }
  }
}

TEST_CASE("formats: f16/bf16 encode of random floats matches Eigen::half / Eigen::bfloat16") {
  std::mt19937 rng(20240601);
  auto check_one = [](float f) {
    const std::uint16_t h = pao::encode_f16_from_f32(f);
    const std::uint16_t h64 = pao::encode_f16(static_cast<double>(f));
    const std::uint16_t eh = Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
    const std::uint16_t b = pao::encode_bf16_from_f32(f);
    const std::uint16_t b64 = pao::encode_bf16(static_cast<double>(f));
    const std::uint16_t eb = Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
    if (std::isnan(f)) {
      // Eigen may keep a NaN payload (F16C); pao stores the canonical code. Both are NaN.
      return (h & 0x7FFF) > 0x7C00 && (eh & 0x7FFF) > 0x7C00 && h == h64 && (b & 0x7FFF) > 0x7F80 &&
             (eb & 0x7FFF) > 0x7F80 && b == b64;
    }
    return h == eh && h64 == eh && b == eb && b64 == eb;
  };
  int failures = 0;
  for (int i = 0; i < 200000; ++i) {
    const float raw = f32_from_bits(rng());                       // all of float, uniform over bit patterns
    const float f16_range = random_float(rng, -27, 17);           // f16 subnormals through overflow
    const float bf16_range = f32_from_bits(rng() & 0x80FFFFFFu);  // float/bf16 subnormals
    for (float f : {raw, f16_range, bf16_range}) {
      if (!check_one(f) && failures++ < 10) {
        CAPTURE(f);
        CAPTURE(f32_bits(f));
        CHECK(false);
      }
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("formats: round_to_f16 / round_to_bf16") {
  CHECK(pao::round_to_f16(1.0f + 0x1p-11f) == 1.0f);
  CHECK(pao::round_to_f16(1.0f + 0x1p-10f) == 1.0f + 0x1p-10f);
  CHECK(pao::round_to_f16(70000.0f) == std::numeric_limits<float>::infinity());
  CHECK(pao::round_to_bf16(1.0f + 0x1p-9f) == 1.0f);
  CHECK(pao::round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);
  CHECK(std::signbit(pao::round_to_bf16(-0x1p-140f)));
}

TEST_CASE("element: bulk decoders agree bit for bit with the scalar decoders on all codes") {
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    const int n = num_codes(s);
    const std::size_t width = pao::dtype_size(s.dtype);
    // Every code, stored little-endian, with one byte of offset so the loads are unaligned.
    std::vector<unsigned char> raw(1 + static_cast<std::size_t>(n) * width);
    for (int c = 0; c < n; ++c) std::memcpy(&raw[1 + c * width], &c, width);
    std::vector<float> f32(n);
    std::vector<double> f64(n);
    // Whole run, then an odd-sized interior run to exercise the vector tails.
    for (const auto& [begin, count] : {std::pair<int, int>{0, n}, std::pair<int, int>{3, n - 11}}) {
      std::fill(f32.begin(), f32.end(), -1.0f);
      pao::decode_to_f32(s.dtype, &raw[1 + begin * width], f32.data() + begin, count);
      pao::decode_to_f64(s.dtype, &raw[1 + begin * width], f64.data() + begin, count);
      int bad = 0;
      for (int c = begin; c < begin + count; ++c) {
        const float want = dec(s, static_cast<std::uint32_t>(c));
        const double want64 = want;
        bad += f32_bits(f32[c]) != f32_bits(want);
        bad += f64_bits(f64[c]) != f64_bits(want64);
      }
      CHECK(bad == 0);
    }
  }
  // f32 and f64 sources.
  const std::vector<float> xs = {1.5f, -0.0f, 0x1p-149f, 3.4e38f, -7.25f};
  std::vector<float> out(xs.size());
  std::vector<double> out64(xs.size());
  pao::decode_to_f32(DType::f32, xs.data(), out.data(), xs.size());
  pao::decode_to_f64(DType::f32, xs.data(), out64.data(), xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CHECK(f32_bits(out[i]) == f32_bits(xs[i]));
    CHECK(out64[i] == static_cast<double>(xs[i]));
  }
  const double ds[] = {1.0 + 0x1p-24, 0.1};
  float fs[2];
  pao::decode_to_f32(DType::f64, ds, fs, 2);
  CHECK(fs[0] == 1.0f);  // tie to even
  CHECK(fs[1] == 0.1f);
}

TEST_CASE("element: bulk encoders agree with the scalar encoders") {
  std::mt19937 rng(777);
  // Random floats: format-range values, raw bit patterns (NaN, inf, subnormals), exact
  // midpoints, and a NaN in some vector blocks only.
  std::vector<float> xs;
  std::vector<double> ds;
  for (int i = 0; i < 50000; ++i) {
    xs.push_back(random_float(rng, -30, 20));
    xs.push_back(f32_from_bits(rng()));
    ds.push_back(random_double(rng, -30, 20));
    ds.push_back(random_double(rng, -140, 130));
  }
  for (const Spec& s : kAll) {
    for (std::uint32_t c = 0; c + 1 < max_finite_code(s); c += 7) {
      xs.push_back(static_cast<float>((ref_value(s, c) + ref_value(s, c + 1)) / 2));
      const double mid = (ref_value(s, c) + ref_value(s, c + 1)) / 2;
      // The midpoint and its neighbours one double ulp away: a sticky bit beyond float's reach.
      for (double d : {mid, std::nextafter(mid, -HUGE_VAL), std::nextafter(mid, HUGE_VAL)}) {
        ds.push_back(d);
        ds.push_back(-d);
      }
    }
  }
  xs.push_back(std::numeric_limits<float>::infinity());
  ds.push_back(-HUGE_VAL);
  ds.push_back(std::numeric_limits<double>::quiet_NaN());
  for (const Spec& s : kAll) {
    const std::string fmt_name = s.name;
    CAPTURE(fmt_name);
    const std::size_t width = pao::dtype_size(s.dtype);
    std::vector<unsigned char> out(1 + xs.size() * width);
    pao::encode_from_f32(s.dtype, xs.data(), &out[1], xs.size());
    int bad = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      std::uint32_t code = 0;
      std::memcpy(&code, &out[1 + i * width], width);
      bad += code != enc32(s, xs[i]);
      bad += code != enc(s, static_cast<double>(xs[i]));
    }
    CHECK(bad == 0);
    std::vector<unsigned char> out64(1 + ds.size() * width);
    pao::encode_from_f64(s.dtype, ds.data(), &out64[1], ds.size());
    bad = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      std::uint32_t code = 0;
      std::memcpy(&code, &out64[1 + i * width], width);
      bad += code != enc(s, ds[i]);
    }
    CHECK(bad == 0);
  }
  // f32 / f64 targets.
  std::vector<float> f(ds.size());
  pao::encode_from_f64(DType::f32, ds.data(), f.data(), ds.size());
  int bad = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    bad += f32_bits(f[i]) != f32_bits(static_cast<float>(ds[i]));
  }
  CHECK(bad == 0);
  std::vector<double> d(xs.size());
  pao::encode_from_f32(DType::f64, xs.data(), d.data(), xs.size());
  bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    bad += f64_bits(d[i]) != f64_bits(static_cast<double>(xs[i]));
  }
  CHECK(bad == 0);
}

TEST_CASE("element: scalar access by runtime dtype") {
  unsigned char buf[8];
  for (const Spec& s : kAll) {
    pao::encode_element(s.dtype, 1.0 + 0x1p-12, buf);
    CHECK(pao::decode_element(s.dtype, buf) == 1.0);
    CHECK(pao::round_to_dtype(s.dtype, -3.0) == -3.0);
  }
  CHECK(pao::round_to_dtype(DType::f16, 1.0 + 0x1p-11) == 1.0);
  CHECK(pao::round_to_dtype(DType::f16, 1.0 + 0x1p-11 + 0x1p-40) == 1.0 + 0x1p-10);
  CHECK(pao::round_to_dtype(DType::fp8_e4m3, 1e6) == 448.0);
  CHECK(pao::round_to_dtype(DType::f32, 0.1) == static_cast<double>(0.1f));
  CHECK(pao::round_to_dtype(DType::f64, 0.1) == 0.1);

  // Integers: round to nearest, ties to even; range-checked.
  CHECK(pao::round_to_dtype(DType::i32, 2.5) == 2.0);
  CHECK(pao::round_to_dtype(DType::i32, 3.5) == 4.0);
  CHECK(pao::round_to_dtype(DType::i32, -2.5) == -2.0);
  CHECK(pao::round_to_dtype(DType::i32, -2.6) == -3.0);
  CHECK(pao::round_to_dtype(DType::i32, 2147483647.4) == 2147483647.0);
  CHECK(pao::round_to_dtype(DType::i32, -2147483648.5) == -2147483648.0);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::i32, 2147483647.5), pao::Error);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::i32, -2147483649.0), pao::Error);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::i32, std::nan("")), pao::Error);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::i64, 0x1p63), pao::Error);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::i64, HUGE_VAL), pao::Error);
  CHECK(pao::round_to_dtype(DType::i64, -0x1p63) == -0x1p63);
  CHECK(pao::round_to_dtype(DType::u8, 255.4) == 255.0);
  CHECK(pao::round_to_dtype(DType::u8, -0.5) == 0.0);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::u8, 255.5), pao::Error);
  CHECK_THROWS_AS(pao::round_to_dtype(DType::u8, -1.0), pao::Error);

  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  std::memcpy(buf, &big, 8);
  CHECK(pao::decode_element(DType::i64, buf) == 0x1p53);  // nearest double
  pao::encode_element(DType::i64, -12345.0, buf);
  std::int64_t back = 0;
  std::memcpy(&back, buf, 8);
  CHECK(back == -12345);

  // Bulk integer conversions go through the same checks.
  const std::int32_t ints[] = {-7, 0, 2147483647};
  double dd[3];
  float ff[3];
  pao::decode_to_f64(DType::i32, ints, dd, 3);
  pao::decode_to_f32(DType::i32, ints, ff, 3);
  CHECK(dd[2] == 2147483647.0);
  CHECK(ff[0] == -7.0f);
  const float too_big[] = {1.0f, 300.0f};
  unsigned char u8s[2];
  CHECK_THROWS_AS(pao::encode_from_f32(DType::u8, too_big, u8s, 2), pao::Error);
  const double ok[] = {1.0, 254.5};
  pao::encode_from_f64(DType::u8, ok, u8s, 2);
  CHECK(u8s[1] == 254);
}

// Bit-exact codecs for the narrow float formats pao stores: f16, bf16, fp8 e4m3fn and fp8 e5m2.
// Host and device share this header (everything is PAO_HD), so the CPU oracle and the CUDA
// kernels decode and round identically. No exceptions, containers or Eigen here: nvcc must
// compile it for device code.
//
// Encoding rules (DESIGN.md, "Numerics contract"):
//  - one round-to-nearest-even straight from the source value (a double or a float), including
//    subnormal results; a double is never rounded through float first;
//  - f16 / bf16 overflow per IEEE: |v| >= max + ulp/2 becomes +-inf;
//  - fp8 (both flavours) saturates to +-max finite, +-inf inputs included, like NVIDIA's
//    __nv_cvt_*_to_fp8(..., __NV_SATFINITE, ...): e4m3fn max 448 (0x7E), e5m2 max 57344 (0x7B);
//  - NaN becomes the format's canonical quiet NaN with the input's sign preserved
//    (f16 0x7E00, bf16 0x7FC0, e4m3fn 0x7F, e5m2 0x7E, OR'ed with the sign bit), as CUDA's fp8
//    conversion and Eigen's half/bfloat16 do;
//  - -0 encodes to the negative-zero code; values that round to zero keep their sign.
// Decoding is exact (every code of these formats is a float). NaN codes decode to a quiet float
// NaN with the code's sign and payload (what x86 F16C vcvtph2ps gives); bf16 decodes by a plain
// 16-bit shift, payload included, like __bfloat162float.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pao/core/hd.hpp"

namespace pao {

namespace detail {

// Bit casts usable in device code (std::bit_cast is host-only under nvcc).
PAO_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

PAO_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

PAO_HD std::uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}

// m / 2^shift rounded to nearest, ties to even. shift in [0, 63].
PAO_HD std::uint64_t shift_right_rne(std::uint64_t m, int shift) {
  if (shift == 0) return m;
  const std::uint64_t q = m >> shift;
  const std::uint64_t rem = m & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

}  // namespace detail

/// Layout of a minifloat: IEEE-like (top exponent = inf/NaN) or "fn" (finite, no inf: only the
/// all-ones magnitude code is NaN, the rest of the top binade holds normal numbers).
enum class MiniKind { ieee, fn };
/// What an encode does with magnitudes beyond max finite (and with inf inputs).
enum class MiniOverflow { to_inf, saturate };

/// Compile-time description of a sign + ExpBits + ManBits format.
template <int ExpBits, int ManBits, MiniKind Kind, MiniOverflow Overflow>
struct Minifloat {
  static_assert(ExpBits >= 2 && ExpBits <= 8 && ManBits >= 1 && ManBits <= 10);
  static_assert(Kind == MiniKind::ieee || Overflow == MiniOverflow::saturate,
                "an fn format has no inf to overflow to");
  static constexpr int kExpBits = ExpBits;
  static constexpr int kManBits = ManBits;
  static constexpr MiniKind kKind = Kind;
  static constexpr MiniOverflow kOverflow = Overflow;
  static constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  static constexpr int kMinExp = 1 - kBias;  // exponent of the smallest normal
  static constexpr std::uint32_t kSignBit = std::uint32_t{1} << (ExpBits + ManBits);
  static constexpr std::uint32_t kExpAllOnes = (std::uint32_t{1} << ExpBits) - 1;
  static constexpr std::uint32_t kManMask = (std::uint32_t{1} << ManBits) - 1;
  // Magnitude codes. For fn formats kInfCode is meaningless and never produced.
  static constexpr std::uint32_t kInfCode = kExpAllOnes << ManBits;
  static constexpr std::uint32_t kMaxFiniteCode = Kind == MiniKind::ieee ? kInfCode - 1 : kSignBit - 2;
  static constexpr std::uint32_t kNaNCode =
      Kind == MiniKind::ieee ? kInfCode | (std::uint32_t{1} << (ManBits - 1)) : kSignBit - 1;
};

using F16Format = Minifloat<5, 10, MiniKind::ieee, MiniOverflow::to_inf>;
using BF16Format = Minifloat<8, 7, MiniKind::ieee, MiniOverflow::to_inf>;
using E4M3Format = Minifloat<4, 3, MiniKind::fn, MiniOverflow::saturate>;
using E5M2Format = Minifloat<5, 2, MiniKind::ieee, MiniOverflow::saturate>;

/// Rounds v (a float or a double, used exactly as given) to format F, once, to nearest even.
/// Returns the code in the low 1 + ExpBits + ManBits bits.
template <class F, class Src>
PAO_HD std::uint32_t encode_minifloat(Src v) {
  static_assert(std::is_same_v<Src, double> || std::is_same_v<Src, float>,
                "encode_minifloat takes a float or a double");
  constexpr bool kDouble = std::is_same_v<Src, double>;
  constexpr int kSrcMan = kDouble ? 52 : 23;
  constexpr int kSrcExpBits = kDouble ? 11 : 8;
  constexpr int kSrcBias = (1 << (kSrcExpBits - 1)) - 1;
  constexpr std::uint64_t kSrcExpAllOnes = (std::uint64_t{1} << kSrcExpBits) - 1;
  static_assert(F::kMinExp >= 1 - kSrcBias, "source subnormals must be target subnormals");

  const std::uint64_t u = kDouble ? detail::double_bits(static_cast<double>(v))
                                  : std::uint64_t{detail::float_bits(static_cast<float>(v))};
  const std::uint32_t sign = (u >> (kSrcMan + kSrcExpBits)) ? F::kSignBit : 0u;
  const std::uint64_t exp_field = (u >> kSrcMan) & kSrcExpAllOnes;
  const std::uint64_t frac = u & ((std::uint64_t{1} << kSrcMan) - 1);

  if (exp_field == kSrcExpAllOnes) {
    if (frac != 0) return sign | F::kNaNCode;
    return sign | (F::kOverflow == MiniOverflow::saturate ? F::kMaxFiniteCode : F::kInfCode);
  }

  // |v| = m * 2^(e - kSrcMan). A source subnormal is below every target's smallest normal
  // (the targets' kMinExp >= the source's), so it always takes the subnormal path; zero too.
  std::uint64_t code;
  if (exp_field != 0 && static_cast<int>(exp_field) - kSrcBias >= F::kMinExp) {
    const int e = static_cast<int>(exp_field) - kSrcBias;
    const std::uint64_t m = frac | (std::uint64_t{1} << kSrcMan);
    const std::uint64_t q = detail::shift_right_rne(m, kSrcMan - F::kManBits);
    // q includes the implicit bit, so adding it to (biased exponent - 1) << ManBits carries
    // into the exponent exactly when rounding reaches the next binade.
    code = (static_cast<std::uint64_t>(e + F::kBias - 1) << F::kManBits) + q;
  } else {
    const int e = exp_field == 0 ? 1 - kSrcBias : static_cast<int>(exp_field) - kSrcBias;
    const std::uint64_t m = exp_field == 0 ? frac : frac | (std::uint64_t{1} << kSrcMan);
    // Quantum of the target subnormals is 2^(kMinExp - ManBits).
    const int shift = kSrcMan - F::kManBits + (F::kMinExp - e);
    // m < 2^(kSrcMan+1): from this shift on the value is below half the smallest subnormal.
    code = shift >= kSrcMan + 2 ? 0 : detail::shift_right_rne(m, shift);
  }
  if (code > F::kMaxFiniteCode) {
    code = F::kOverflow == MiniOverflow::saturate ? F::kMaxFiniteCode : F::kInfCode;
  }
  return sign | static_cast<std::uint32_t>(code);
}

/// Exact value of code (low 1 + ExpBits + ManBits bits) of format F.
template <class F>
PAO_HD float decode_minifloat(std::uint32_t code) {
  const std::uint32_t sign = (code & F::kSignBit) ? 0x80000000u : 0u;
  const std::uint32_t mag = code & (F::kSignBit - 1);
  const std::uint32_t exp_field = mag >> F::kManBits;
  const std::uint32_t man = mag & F::kManMask;
  constexpr int kToF32 = 23 - F::kManBits;
  if constexpr (F::kExpBits == 8) {
    // Same exponent layout as float: the code is the top of a float, subnormals included.
    return detail::bits_float(sign | (mag << kToF32));
  } else {
    const bool is_nan =
        F::kKind == MiniKind::ieee ? exp_field == F::kExpAllOnes && man != 0 : mag == F::kNaNCode;
    if (is_nan) return detail::bits_float(sign | 0x7FC00000u | (man << kToF32));
    if (F::kKind == MiniKind::ieee && exp_field == F::kExpAllOnes) {
      return detail::bits_float(sign | 0x7F800000u);
    }
    if (exp_field == 0) {
      // man * 2^(kMinExp - ManBits): a normal float for ExpBits < 8, so the product is exact
      // and survives flush-to-zero.
      constexpr std::uint32_t kQuantumBits = static_cast<std::uint32_t>(127 + F::kMinExp - F::kManBits) << 23;
      const float m = static_cast<float>(man) * detail::bits_float(kQuantumBits);
      return detail::bits_float(sign | detail::float_bits(m));
    }
    return detail::bits_float(
        sign | (static_cast<std::uint32_t>(static_cast<int>(exp_field) - F::kBias + 127) << 23) |
        (man << kToF32));
  }
}

PAO_HD float decode_f16(std::uint16_t bits) { return decode_minifloat<F16Format>(bits); }
PAO_HD float decode_bf16(std::uint16_t bits) {
  return detail::bits_float(static_cast<std::uint32_t>(bits) << 16);
}
PAO_HD float decode_fp8_e4m3(std::uint8_t bits) { return decode_minifloat<E4M3Format>(bits); }
PAO_HD float decode_fp8_e5m2(std::uint8_t bits) { return decode_minifloat<E5M2Format>(bits); }

PAO_HD std::uint16_t encode_f16(double v) {
  return static_cast<std::uint16_t>(encode_minifloat<F16Format>(v));
}
PAO_HD std::uint16_t encode_bf16(double v) {
  return static_cast<std::uint16_t>(encode_minifloat<BF16Format>(v));
}
PAO_HD std::uint8_t encode_fp8_e4m3(double v) {
  return static_cast<std::uint8_t>(encode_minifloat<E4M3Format>(v));
}
PAO_HD std::uint8_t encode_fp8_e5m2(double v) {
  return static_cast<std::uint8_t>(encode_minifloat<E5M2Format>(v));
}

/// Float-source encoders: same result as the double ones (float -> double is exact), cheaper.
PAO_HD std::uint16_t encode_f16_from_f32(float v) {
  return static_cast<std::uint16_t>(encode_minifloat<F16Format>(v));
}
/// The one f32 -> bf16 rounding (what encode_minifloat<BF16Format> computes, branch-free so that
/// loops of it vectorise): adding 0x7FFF plus the kept half's lsb carries into the kept bits
/// exactly when the dropped half is above half an ulp, or half and the kept lsb odd; an overflow
/// carries into the exponent and gives inf; float subnormals round like any other value; NaN
/// gives the canonical 0x7FC0 with the input's sign.
PAO_HD std::uint16_t encode_bf16_from_f32(float v) {
  const std::uint32_t u = detail::float_bits(v);
  const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const std::uint32_t nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
  return static_cast<std::uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}
PAO_HD std::uint8_t encode_fp8_e4m3_from_f32(float v) {
  return static_cast<std::uint8_t>(encode_minifloat<E4M3Format>(v));
}
PAO_HD std::uint8_t encode_fp8_e5m2_from_f32(float v) {
  return static_cast<std::uint8_t>(encode_minifloat<E5M2Format>(v));
}

/// The value a float becomes when stored as f16 / bf16 (the kernels' rounding points).
PAO_HD float round_to_f16(float x) { return decode_f16(encode_f16_from_f32(x)); }
PAO_HD float round_to_bf16(float x) { return decode_bf16(encode_bf16_from_f32(x)); }

}  // namespace pao

// Each dtype's storage and scalar codec at compile time, for host and device (PAO_HD): the code
// half of a dtype's row, beside its data in pao/core/dtype.hpp's kDTypes. The CPU's runtime
// element access (numerics/element.cpp) and the CUDA kernels' loads both read a dtype through
// DTypeCodec<dtype>, so its bits are decoded one way everywhere. A new dtype is a row there and a
// specialisation here (its float format's codec in numerics/formats.hpp).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "pao/core/dtype.hpp"
#include "pao/core/hd.hpp"
#include "pao/numerics/formats.hpp"

namespace pao {

/// Bits: how an element is stored. decode(bits): its exact value (a float for every format
/// that fits one). encode(v): one round-to-nearest-even from a double or a float (formats.hpp);
/// the integers round half to even and throw outside their range or on NaN (host only).
template <DType dt>
struct DTypeCodec;

template <>
struct DTypeCodec<DType::f64> {
  using Bits = double;
  PAO_HD static double decode(Bits b) { return b; }
  PAO_HD static Bits encode(double v) { return v; }
  PAO_HD static Bits encode(float v) { return v; }
};
template <>
struct DTypeCodec<DType::f32> {
  using Bits = float;
  PAO_HD static float decode(Bits b) { return b; }
  PAO_HD static Bits encode(double v) { return static_cast<float>(v); }
  PAO_HD static Bits encode(float v) { return v; }
};
/// A narrow float format of numerics/formats.hpp (Minifloat<...>): its one rounding and its decode.
template <typename Format, typename B>
struct MinifloatCodec {
  using Bits = B;
  PAO_HD static float decode(Bits b) { return decode_minifloat<Format>(b); }
  PAO_HD static Bits encode(double v) { return static_cast<Bits>(encode_minifloat<Format>(v)); }
  PAO_HD static Bits encode(float v) { return static_cast<Bits>(encode_minifloat<Format>(v)); }
};
template <>
struct DTypeCodec<DType::f16> : MinifloatCodec<F16Format, std::uint16_t> {};
/// bf16: formats.hpp's shift and branch-free rounding from a float (the same bits as the generic
/// ones; one instruction, and loops of them vectorise).
template <>
struct DTypeCodec<DType::bf16> : MinifloatCodec<BF16Format, std::uint16_t> {
  using MinifloatCodec::encode;
  PAO_HD static float decode(Bits b) { return decode_bf16(b); }
  PAO_HD static Bits encode(float v) { return encode_bf16_from_f32(v); }
};
template <>
struct DTypeCodec<DType::fp8_e4m3> : MinifloatCodec<E4M3Format, std::uint8_t> {};
template <>
struct DTypeCodec<DType::fp8_e5m2> : MinifloatCodec<E5M2Format, std::uint8_t> {};

/// The integers: exact decode (a float up to 16 bits, a double beyond: i64 past 2^53 rounds to
/// nearest); encode is host code (numerics/element.cpp).
template <DType dt, typename T>
struct IntegerCodec {
  using Bits = T;
  using Value = std::conditional_t<(sizeof(T) <= 2), float, double>;
  PAO_HD static Value decode(Bits b) { return static_cast<Value>(b); }
  static Bits encode(double v);
};
template <>
struct DTypeCodec<DType::i32> : IntegerCodec<DType::i32, std::int32_t> {};
template <>
struct DTypeCodec<DType::i64> : IntegerCodec<DType::i64, std::int64_t> {};
template <>
struct DTypeCodec<DType::u8> : IntegerCodec<DType::u8, std::uint8_t> {};
template <>
struct DTypeCodec<DType::i8> : IntegerCodec<DType::i8, std::int8_t> {};

static_assert(
    [] {
      bool ok = true;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((ok = ok && sizeof(typename DTypeCodec<kDTypes[I].type>::Bits) == kDTypes[I].bytes), ...);
      }
      (std::make_index_sequence<kDTypes.size()>());
      return ok;
    }(),
    "every row of kDTypes has a codec whose bits are its size");

}  // namespace pao

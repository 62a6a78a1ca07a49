// Element types of pao tensors, their sizes and their names (pao names and safetensors names).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pao {

enum class DType : std::uint8_t {
  f64,
  f32,
  f16,
  bf16,
  fp8_e4m3,  // e4m3fn: no inf, max 448, NaN = S.1111.111
  fp8_e5m2,  // IEEE-like: inf and NaN, max 57344
  i32,
  i64,
  u8,
};

inline constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64:
      return 8;
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::fp8_e4m3:
      return 1;
    case DType::fp8_e5m2:
      return 1;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::u8:
      return 1;
  }
  return 0;
}

inline constexpr bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }
inline constexpr bool is_floating(DType t) {
  return t == DType::f64 || t == DType::f32 || t == DType::f16 || t == DType::bf16 || is_fp8(t);
}
/// Activation dtypes: what query, key, value and out may be.
inline constexpr bool is_activation(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

/// pao's short names: f64 f32 f16 bf16 fp8_e4m3 fp8_e5m2 i32 i64 u8.
std::string_view dtype_name(DType t);
/// Parses a pao short name; throws pao::Error naming `what` on an unknown name.
DType parse_dtype(std::string_view name, std::string_view what = "dtype");
/// safetensors dtype strings: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64 U8.
std::string_view safetensors_dtype_name(DType t);
DType parse_safetensors_dtype(std::string_view name);

}  // namespace pao

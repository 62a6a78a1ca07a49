// Element types of pao tensors: the one table of every dtype (its names in pao, safetensors,
// case ids, numpy / torch, its size, what it may be used for, how a quantised cache of it is
// read), and the functions that ask it. Adding a dtype is a row here (and its codec in
// numerics/formats.hpp and numerics/element.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
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
  i8,
};

struct DTypeInfo {
  DType type;
  std::string_view name;         // pao's name: "fp8_e4m3"
  std::string_view safetensors;  // "F8_E4M3"
  std::string_view short_name;   // in case ids: "e4m3" (a cache) or the pao name
  std::string_view array_name;   // numpy / ml_dtypes / torch: "float8_e4m3fn"
  std::string_view format;       // golden metadata fp8_format: "e4m3fn", "e5m2"; "none"
  std::uint8_t bytes;
  char kind;          // numpy's dtype.kind: 'f' floating, 'i' signed integer, 'u' unsigned integer
  bool activation;    // query, key, value, out may be it (f32, f16, bf16)
  bool cache_format;  // a kv_cache_dtype of its own beside "auto" (the activation dtype)
  bool scaled;        // a cache stores value / scale: dequantised as code * scale (fp8); integer
                      // caches (u8, i8) are cache formats too, dequantised (code - zero point) *
                      // scale with the scales and zero points of a kv_quant spec (kv_quant.hpp)
  bool numpy_native;  // numpy has the dtype; bf16 / fp8 cross the Python boundary as raw bits
  DType misread_as;   // the dtype a confused kernel decodes it as (audit: fp8 flavours, signed /
                      // unsigned); itself when none
  // Floating point: the significand's bits (implicit bit included) and the smallest normal
  // exponent, what ULPs and the unit roundoff are made of (numerics/ulp.hpp); 0 for integers.
  std::uint8_t significand_bits;
  std::int16_t min_exponent;
  // Its position in the safetensors crate's Dtype enum (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16,
  // F16, BF16, I32, U32, F32, F64, I64, U64): the official writer orders tensors by it.
  std::uint8_t safetensors_rank;
};

// clang-format off
inline constexpr std::array<DTypeInfo, 10> kDTypes{{
    {.type = DType::f64, .name = "f64", .safetensors = "F64", .short_name = "f64", .array_name = "float64",
     .format = "none", .bytes = 8, .kind = 'f',
     .activation = false, .cache_format = false, .scaled = false, .numpy_native = true,
     .misread_as = DType::f64, .significand_bits = 53, .min_exponent = -1022, .safetensors_rank = 12},
    {.type = DType::f32, .name = "f32", .safetensors = "F32", .short_name = "f32", .array_name = "float32",
     .format = "none", .bytes = 4, .kind = 'f',
     .activation = true, .cache_format = false, .scaled = false, .numpy_native = true,
     .misread_as = DType::f32, .significand_bits = 24, .min_exponent = -126, .safetensors_rank = 11},
    {.type = DType::f16, .name = "f16", .safetensors = "F16", .short_name = "f16", .array_name = "float16",
     .format = "none", .bytes = 2, .kind = 'f',
     .activation = true, .cache_format = false, .scaled = false, .numpy_native = true,
     .misread_as = DType::f16, .significand_bits = 11, .min_exponent = -14, .safetensors_rank = 7},
    {.type = DType::bf16, .name = "bf16", .safetensors = "BF16", .short_name = "bf16", .array_name = "bfloat16",
     .format = "none", .bytes = 2, .kind = 'f',
     .activation = true, .cache_format = false, .scaled = false, .numpy_native = false,
     .misread_as = DType::bf16, .significand_bits = 8, .min_exponent = -126, .safetensors_rank = 8},
    {.type = DType::fp8_e4m3, .name = "fp8_e4m3", .safetensors = "F8_E4M3", .short_name = "e4m3", .array_name = "float8_e4m3fn",
     .format = "e4m3fn", .bytes = 1, .kind = 'f',
     .activation = false, .cache_format = true, .scaled = true, .numpy_native = false,
     .misread_as = DType::fp8_e5m2, .significand_bits = 4, .min_exponent = -6, .safetensors_rank = 4},
    {.type = DType::fp8_e5m2, .name = "fp8_e5m2", .safetensors = "F8_E5M2", .short_name = "e5m2", .array_name = "float8_e5m2",
     .format = "e5m2", .bytes = 1, .kind = 'f',
     .activation = false, .cache_format = true, .scaled = true, .numpy_native = false,
     .misread_as = DType::fp8_e4m3, .significand_bits = 3, .min_exponent = -14, .safetensors_rank = 3},
    {.type = DType::i32, .name = "i32", .safetensors = "I32", .short_name = "i32", .array_name = "int32",
     .format = "none", .bytes = 4, .kind = 'i',
     .activation = false, .cache_format = false, .scaled = false, .numpy_native = true,
     .misread_as = DType::i32, .significand_bits = 0, .min_exponent = 0, .safetensors_rank = 9},
    {.type = DType::i64, .name = "i64", .safetensors = "I64", .short_name = "i64", .array_name = "int64",
     .format = "none", .bytes = 8, .kind = 'i',
     .activation = false, .cache_format = false, .scaled = false, .numpy_native = true,
     .misread_as = DType::i64, .significand_bits = 0, .min_exponent = 0, .safetensors_rank = 13},
    {.type = DType::u8, .name = "u8", .safetensors = "U8", .short_name = "u8", .array_name = "uint8",
     .format = "none", .bytes = 1, .kind = 'u',
     .activation = false, .cache_format = true, .scaled = false, .numpy_native = true,
     .misread_as = DType::i8, .significand_bits = 0, .min_exponent = 0, .safetensors_rank = 1},
    {.type = DType::i8, .name = "i8", .safetensors = "I8", .short_name = "i8", .array_name = "int8",
     .format = "none", .bytes = 1, .kind = 'i',
     .activation = false, .cache_format = true, .scaled = false, .numpy_native = true,
     .misread_as = DType::u8, .significand_bits = 0, .min_exponent = 0, .safetensors_rank = 2},
}};
// clang-format on

inline constexpr const DTypeInfo& dtype_info(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }
static_assert(
    [] {
      for (std::size_t i = 0; i < kDTypes.size(); ++i)
        if (static_cast<std::size_t>(kDTypes[i].type) != i) return false;
      return true;
    }(),
    "kDTypes is indexed by DType");

inline constexpr std::size_t dtype_size(DType t) { return dtype_info(t).bytes; }
inline constexpr bool is_fp8(DType t) { return dtype_info(t).scaled; }
inline constexpr bool is_floating(DType t) { return dtype_info(t).kind == 'f'; }
/// Cache formats: the dtypes a KV cache may hold besides the activation dtype (kv_cache_dtype).
inline constexpr bool is_cache_format(DType t) { return dtype_info(t).cache_format; }
/// Integer cache formats (u8, i8): codes with a scale and a zero point per group (kv_quant.hpp).
inline constexpr bool is_integer_cache(DType t) { return dtype_info(t).cache_format && !is_floating(t); }
/// Activation dtypes: what query, key, value and out may be.
inline constexpr bool is_activation(DType t) { return dtype_info(t).activation; }

/// pao's short names: f64 f32 f16 bf16 fp8_e4m3 fp8_e5m2 i32 i64 u8 i8.
std::string_view dtype_name(DType t);
/// Parses a pao short name; throws pao::Error naming `what` on an unknown name.
DType parse_dtype(std::string_view name, std::string_view what = "dtype");
/// safetensors dtype strings: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64 U8 I8.
std::string_view safetensors_dtype_name(DType t);
DType parse_safetensors_dtype(std::string_view name);
/// "f32, f16, bf16" (with `last` " or ": "f32, f16 or bf16"): the names of the dtypes `keep`
/// accepts, for error messages.
std::string dtype_names(bool (*keep)(DType), std::string_view last = ", ");

}  // namespace pao

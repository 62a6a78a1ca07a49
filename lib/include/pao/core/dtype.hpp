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
  // type             name        safet.     short   array name       format    B  kind  activ  cache  scaled  numpy  misread as       sig  emin   st
    {DType::f64,      "f64",      "F64",     "f64",  "float64",       "none",   8, 'f',  false, false, false,  true,  DType::f64,      53,  -1022, 12},
    {DType::f32,      "f32",      "F32",     "f32",  "float32",       "none",   4, 'f',  true,  false, false,  true,  DType::f32,      24,  -126,  11},
    {DType::f16,      "f16",      "F16",     "f16",  "float16",       "none",   2, 'f',  true,  false, false,  true,  DType::f16,      11,  -14,   7},
    {DType::bf16,     "bf16",     "BF16",    "bf16", "bfloat16",      "none",   2, 'f',  true,  false, false,  false, DType::bf16,     8,   -126,  8},
    {DType::fp8_e4m3, "fp8_e4m3", "F8_E4M3", "e4m3", "float8_e4m3fn", "e4m3fn", 1, 'f',  false, true,  true,   false, DType::fp8_e5m2, 4,   -6,    4},
    {DType::fp8_e5m2, "fp8_e5m2", "F8_E5M2", "e5m2", "float8_e5m2",   "e5m2",   1, 'f',  false, true,  true,   false, DType::fp8_e4m3, 3,   -14,   3},
    {DType::i32,      "i32",      "I32",     "i32",  "int32",         "none",   4, 'i',  false, false, false,  true,  DType::i32,      0,   0,     9},
    {DType::i64,      "i64",      "I64",     "i64",  "int64",         "none",   8, 'i',  false, false, false,  true,  DType::i64,      0,   0,     13},
    {DType::u8,       "u8",       "U8",      "u8",   "uint8",         "none",   1, 'u',  false, true,  false,  true,  DType::i8,       0,   0,     1},
    {DType::i8,       "i8",       "I8",      "i8",   "int8",          "none",   1, 'i',  false, true,  false,  true,  DType::u8,       0,   0,     2},
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
/// "f32, f16, bf16": the names of the dtypes `keep` accepts, for error messages.
std::string dtype_names(bool (*keep)(DType));

}  // namespace pao

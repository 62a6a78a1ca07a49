// Names of element types.
#include "pao/core/dtype.hpp"

#include <array>
#include <utility>

#include "pao/core/error.hpp"

namespace pao {
namespace {

struct DTypeNames {
  DType type;
  std::string_view pao;
  std::string_view safetensors;
};

constexpr std::array<DTypeNames, 9> kNames{{
    {DType::f64, "f64", "F64"},
    {DType::f32, "f32", "F32"},
    {DType::f16, "f16", "F16"},
    {DType::bf16, "bf16", "BF16"},
    {DType::fp8_e4m3, "fp8_e4m3", "F8_E4M3"},
    {DType::fp8_e5m2, "fp8_e5m2", "F8_E5M2"},
    {DType::i32, "i32", "I32"},
    {DType::i64, "i64", "I64"},
    {DType::u8, "u8", "U8"},
}};

}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& n : kNames)
    if (n.type == t) return n.pao;
  return "?";
}

std::string_view safetensors_dtype_name(DType t) {
  for (const auto& n : kNames)
    if (n.type == t) return n.safetensors;
  return "?";
}

DType parse_dtype(std::string_view name, std::string_view what) {
  for (const auto& n : kNames)
    if (n.pao == name) return n.type;
  fail(what, ": unknown dtype '", name, "' (expected one of f64 f32 f16 bf16 fp8_e4m3 fp8_e5m2 i32 i64 u8)");
}

DType parse_safetensors_dtype(std::string_view name) {
  for (const auto& n : kNames)
    if (n.safetensors == name) return n.type;
  fail("safetensors dtype '", name, "' is not supported (F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64 U8)");
}

}  // namespace pao

// Names of element types, from the one table (pao/core/dtype.hpp).
#include "pao/core/dtype.hpp"

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"

namespace pao {

namespace {

std::string joined(bool (*keep)(DType), std::string_view DTypeInfo::*field, const char* separator) {
  std::string out;
  for (const auto& d : kDTypes) {
    if (keep != nullptr && !keep(d.type)) continue;
    if (!out.empty()) out += separator;
    out += d.*field;
  }
  return out;
}

}  // namespace

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::string_view safetensors_dtype_name(DType t) { return dtype_info(t).safetensors; }

std::string dtype_names(bool (*keep)(DType)) { return joined(keep, &DTypeInfo::name, ", "); }

DType parse_dtype(std::string_view name, std::string_view what) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  fail(what, ": unknown dtype '", excerpt(name), "' (expected one of ",
       joined(nullptr, &DTypeInfo::name, " "), ")");
}

DType parse_safetensors_dtype(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.safetensors == name) return d.type;
  fail("safetensors dtype '", excerpt(name), "' is not supported (",
       joined(nullptr, &DTypeInfo::safetensors, " "), ")");
}

}  // namespace pao

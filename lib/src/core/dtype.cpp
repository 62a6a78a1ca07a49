// Names of element types, from the one table (pao/core/dtype.hpp).
#include "pao/core/dtype.hpp"

#include <vector>

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"

namespace pao {

namespace {

/// The names `keep` accepts, `separator` between them and `last` before the last one.
std::string joined(bool (*keep)(DType), std::string_view DTypeInfo::*field, std::string_view separator,
                   std::string_view last) {
  std::vector<std::string_view> names;
  for (const auto& d : kDTypes)
    if (keep == nullptr || keep(d.type)) names.push_back(d.*field);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? last : separator;
    out += names[i];
  }
  return out;
}

}  // namespace

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::string_view safetensors_dtype_name(DType t) { return dtype_info(t).safetensors; }

std::string dtype_names(bool (*keep)(DType), std::string_view last) {
  return joined(keep, &DTypeInfo::name, ", ", last);
}

DType parse_dtype(std::string_view name, std::string_view what) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  fail(what, ": unknown dtype '", excerpt(name), "' (expected one of ",
       joined(nullptr, &DTypeInfo::name, " ", " "), ")");
}

DType parse_safetensors_dtype(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.safetensors == name) return d.type;
  fail("safetensors dtype '", excerpt(name), "' is not supported (",
       joined(nullptr, &DTypeInfo::safetensors, " ", " "), ")");
}

}  // namespace pao

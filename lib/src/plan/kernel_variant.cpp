// Names of the launch variants (pao/plan/kernel_variant.hpp).
#include "pao/plan/kernel_variant.hpp"

#include <array>
#include <utility>

namespace pao {

namespace {

constexpr std::array<std::pair<KernelVariant, std::string_view>, 4> kNames{{
    {KernelVariant::v1, "v1"},
    {KernelVariant::v2, "v2"},
    {KernelVariant::prefix, "prefix"},
    {KernelVariant::fallback, "fallback"},
}};

}  // namespace

std::string to_string(KernelVariant variant) {
  for (const auto& [v, name] : kNames)
    if (v == variant) return std::string(name);
  return "?";
}

bool try_parse_kernel_variant(std::string_view name, KernelVariant& variant) {
  for (const auto& [v, n] : kNames)
    if (n == name) {
      variant = v;
      return true;
    }
  return false;
}

}  // namespace pao

// The table of kernel kinds (pao/kinds/kernel_kind.hpp): one descriptor per kind, indexed by
// CaseKernel. A new kind is a descriptor of its own (kinds/<kind>_kind.cpp) and a line here.
#include <algorithm>

#include "kinds/kind_registry.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds {

const OutputSpec* KernelKind::output(std::string_view name) const {
  for (const auto& o : traits_.outputs)
    if (o.name == name) return &o;
  return nullptr;
}

std::vector<std::pair<std::string, Tensor>> KernelKind::compute_outputs(
    const golden::GoldenTensors& g, const std::vector<std::string>& names) const {
  return compute_outputs_as(g.golden_case, g, names);
}

std::string vendor_name(const OutputSpec& spec) {
  if (spec.judged == OutputSpec::Judged::final_output) return "out";
  if (spec.judged == OutputSpec::Judged::partial && !spec.aliases.empty())
    return std::string(spec.aliases.front());
  return std::string(spec.name);
}

bool KernelKind::runs_as(KernelVariant v) const {
  return std::find(traits_.variants.begin(), traits_.variants.end(), v) != traits_.variants.end();
}

bool KernelKind::writes_cache() const {
  return std::any_of(traits_.outputs.begin(), traits_.outputs.end(),
                     [](const OutputSpec& o) { return o.layout == RowLayout::cache; });
}

std::optional<RowLayout> KernelKind::attention_rows() const {
  for (const auto& o : traits_.outputs)
    if (o.judged == OutputSpec::Judged::final_output) return o.layout;
  return std::nullopt;
}

std::span<const KernelKind* const> kernel_kinds() {
  static const KernelKind* const kinds[] = {&detail::decode_kind(), &detail::prefix_kind(),
                                            &detail::reshape_and_cache_kind(),
                                            &detail::write_and_attend_kind()};
  return kinds;
}

const KernelKind& kind_of(cases::CaseKernel kernel) {
  for (const KernelKind* k : kernel_kinds())
    if (k->traits().id == kernel) return *k;
  fail("kernel kind ", static_cast<int>(kernel), " has no descriptor");
}

const KernelKind* find_kind(std::string_view name) {
  for (const KernelKind* k : kernel_kinds())
    if (k->name() == name) return k;
  return nullptr;
}

std::string kind_names() {
  std::string out;
  const auto kinds = kernel_kinds();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i) out += i + 1 == kinds.size() ? " or " : ", ";
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "\"" + std::string.
    out += '"';
    out += kinds[i]->name();
    out += '"';
  }
  return out;
}

bool golden_tensor_applies(const cases::Case& c, std::string_view name) {
  if (name == "alibi_slopes") return c.alibi;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
    for (const bool zp : {false, true}) {
      const std::string_view param = quant_param_name(t, zp);  // and the write's param_before
      if (name.substr(0, param.size()) == param &&
          (name.size() == param.size() || name.substr(param.size()) == "_before"))
        return c.integer_cache();
    }
  return true;
}

}  // namespace pao::kinds

// Which outputs a golden holds (pao/golden/output_selection.hpp).
#include "pao/golden/output_selection.hpp"

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::golden {

namespace {

/// "kernel": every group but "exact", the kernel-precision outputs.
constexpr std::string_view kExactGroup = "exact";

}  // namespace

const std::vector<std::string>& output_groups() {
  static const std::vector<std::string> groups = [] {
    std::vector<std::string> g;
    for (const kinds::KernelKind* k : kinds::kernel_kinds())
      for (const auto& o : k->traits().outputs)
        if (!o.group.empty() && std::find(g.begin(), g.end(), o.group) == g.end()) g.emplace_back(o.group);
    return g;
  }();
  return groups;
}

OutputSelection::OutputSelection() : groups(output_groups()) {}

bool OutputSelection::keeps(std::string_view group) const {
  return group.empty() || std::find(groups.begin(), groups.end(), group) != groups.end();
}

bool OutputSelection::all() const { return groups == output_groups(); }

OutputSelection parse_output_selection(std::string_view list, std::string_view what) {
  OutputSelection s;
  if (list == "all") return s;
  s.groups.clear();
  if (list == "none") return s;
  std::vector<std::string> asked;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    const auto& known = output_groups();
    if (item == "kernel") {
      for (const auto& g : known)
        if (g != kExactGroup) asked.push_back(g);
      continue;
    }
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      std::string names;
      for (const auto& g : known) names += g + ", ";
      fail(what, ": unknown output group '", item, "' (groups: ", names,
           "kernel; or all, none; comma-separated)");
    }
    asked.emplace_back(item);
  }
  for (const auto& g : output_groups())  // canonical order, no repeats
    if (std::find(asked.begin(), asked.end(), g) != asked.end()) s.groups.push_back(g);
  return s;
}

std::string to_string(const OutputSelection& s) {
  if (s.all()) return "all";
  std::vector<std::string> kernel;
  for (const auto& g : output_groups())
    if (g != kExactGroup) kernel.push_back(g);
  if (s.groups == kernel) return "kernel";
  std::string text;
  for (const auto& g : s.groups) {
    if (!text.empty()) text += ',';
    text += g;
  }
  return text.empty() ? "none" : text;
}

std::vector<std::string> selected_output_names(cases::CaseKernel kernel, const OutputSelection& s) {
  std::vector<std::string> out;
  for (const auto& o : kinds::kind_of(kernel).traits().outputs)
    if (s.keeps(o.group)) out.emplace_back(o.name);
  return out;
}

}  // namespace pao::golden

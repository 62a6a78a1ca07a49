// Which outputs a golden holds (pao/golden/output_selection.hpp).
#include "pao/golden/output_selection.hpp"

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::golden {

namespace {

/// The groups in canonical order, with the member of OutputSelection each sets.
struct Group {
  const char* name;
  bool OutputSelection::*member;
};
constexpr Group kGroups[] = {{"exact", &OutputSelection::exact},
                             {"v1", &OutputSelection::v1},
                             {"v2", &OutputSelection::v2},
                             {"partials", &OutputSelection::partials},
                             {"prefix", &OutputSelection::prefix}};

/// The group an output belongs to.
bool OutputSelection::*group_of(std::string_view output) {
  if (output == "out" || output == "out_exact") return &OutputSelection::exact;
  if (output == "v1.out") return &OutputSelection::v1;
  if (output == "v2.out") return &OutputSelection::v2;
  if (output == "prefix.out") return &OutputSelection::prefix;
  return &OutputSelection::partials;  // v2.tmp_out, v2.max_logits, v2.exp_sums
}

}  // namespace

OutputSelection parse_output_selection(std::string_view list, std::string_view what) {
  OutputSelection none{false, false, false, false, false};
  if (list == "all") return OutputSelection{};
  if (list == "none") return none;
  OutputSelection s = none;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    if (item == "kernel") {
      s.v1 = s.v2 = s.partials = s.prefix = true;
      continue;
    }
    const auto g =
        std::find_if(std::begin(kGroups), std::end(kGroups), [&](const Group& x) { return item == x.name; });
    if (g == std::end(kGroups))
      fail(what, ": unknown output group '", item,
           "' (groups: exact, v1, v2, partials, prefix, kernel; or all, none; comma-separated)");
    s.*(g->member) = true;
  }
  return s;
}

std::string to_string(const OutputSelection& s) {
  if (s.all()) return "all";
  if (!s.exact && s.v1 && s.v2 && s.partials && s.prefix) return "kernel";
  std::string text;
  for (const auto& g : kGroups) {
    if (!(s.*(g.member))) continue;
    if (!text.empty()) text += ',';
    text.append(g.name);
  }
  return text.empty() ? "none" : text;
}

std::vector<std::string> selected_output_names(cases::CaseKernel kernel, const OutputSelection& s) {
  std::vector<std::string> out;
  for (const auto& name : golden_output_names(kernel))
    if (kernel == cases::CaseKernel::reshape_and_cache || s.*group_of(name)) out.push_back(name);
  return out;
}

}  // namespace pao::golden

// Which outputs a golden file holds (`pao golden --outputs`). The inputs are always there; an
// output left out is recomputed from them by whoever needs it (read_golden, pao diff, the
// invariants), so a smaller golden gives the same verdicts.
//
// Groups: exact    out (exact, rounded) and out_exact (F64)      decode and prefix
//         v1       v1.out                                         decode
//         v2       v2.out                                         decode
//         partials v2.tmp_out, v2.max_logits, v2.exp_sums          decode
//         prefix   prefix.out                                     prefix
//         kernel   v1, v2, partials and prefix
//         all      every group (the default); none: inputs only
// reshape_and_cache goldens always hold their written key_cache and value_cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"

namespace pao::golden {

/// The output groups a golden keeps: the groups the kernel kinds give their outputs
/// (pao/kinds/kernel_kind.hpp, OutputSpec::group), every one of them by default.
struct OutputSelection {
  OutputSelection();                // every group
  std::vector<std::string> groups;  // in canonical order
  bool keeps(std::string_view group) const;
  bool all() const;
  bool operator==(const OutputSelection&) const = default;
};

/// Every group, in canonical order (the kinds', in table order): exact, v1, v2, partials, prefix.
const std::vector<std::string>& output_groups();

/// "exact,v2,partials", "kernel", "all", "none". Throws pao::Error naming `what` and the
/// unknown group.
OutputSelection parse_output_selection(std::string_view list, std::string_view what = "--outputs");

/// The canonical text: "all", "kernel", "none", or the groups in the order above ("exact,v2,partials").
std::string to_string(const OutputSelection& s);

/// The outputs of `kernel` that `s` keeps, in the order of golden_output_names.
std::vector<std::string> selected_output_names(cases::CaseKernel kernel, const OutputSelection& s);

}  // namespace pao::golden

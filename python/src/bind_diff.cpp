// pao._pao's diff: `pao diff GOLDEN ACTUAL` with its options, the report as JSON and as text.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "pao/diff/diff.hpp"
#include "pao/diff/policy.hpp"
#include "pao/diff/report.hpp"

namespace pao::python {

namespace nb = nanobind;

namespace {

/// (passed, JSON report, text report)
std::tuple<bool, std::string, std::string> diff(const std::string& golden, const std::string& actual,
                                                bool reduce, const std::vector<std::string>& policies,
                                                const std::string& cases_glob, bool allow_missing,
                                                bool allow_dtype_mismatch, bool verbose) {
  diff::DiffOptions options;
  options.reduce = reduce;
  for (const auto& p : policies) options.overrides.push_back(diff::parse_policy_override(p));
  options.cases_glob = cases_glob;
  options.allow_missing = allow_missing;
  options.allow_dtype_mismatch = allow_dtype_mismatch;
  nb::gil_scoped_release release;
  const diff::DiffReport report = diff::diff_paths(golden, actual, options);
  diff::TextOptions text;
  text.verbose = verbose;
  return {report.failed() == 0, diff::render_json(report), diff::render_text(report, text)};
}

}  // namespace

void bind_diff(nb::module_& m) {
  m.def("diff", &diff, nb::arg("golden"), nb::arg("actual"), nb::arg("reduce") = false,
        nb::arg("policies") = std::vector<std::string>{}, nb::arg("cases_glob") = "",
        nb::arg("allow_missing") = false, nb::arg("allow_dtype_mismatch") = false, nb::arg("verbose") = false,
        "pao diff GOLDEN ACTUAL: (passed, JSON report, text report).");
}

}  // namespace pao::python

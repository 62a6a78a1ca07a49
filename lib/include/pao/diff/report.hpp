// Diff reports: human text (the default; its last line is "N passed, N failed"), JSON (top-level
// "passed", "failed", "cases" and a flat "tensors" list whose entries carry name, status, worst
// {seq, head, partition, ...} and pattern) and JUnit XML (one testsuite per case, one testcase per
// tensor). N counts tensors; a case that could not be diffed counts as one failure.
#pragma once

#include <string>

#include "pao/diff/diff.hpp"

namespace pao::diff {

struct TextOptions {
  bool verbose = false;      // details (worst elements, summaries, histogram) for passing tensors too
  std::size_t max_rows = 8;  // rows per summary table before "..."
};

std::string render_text(const DiffReport& report, const TextOptions& options = {});
/// One tensor's part of the text report: "  v2.tmp_out           PASS  <criterion>\n", and its
/// details (worst elements, summaries, pattern) when it fails or with `verbose`.
std::string render_tensor_text(const TensorReport& tensor, const TextOptions& options = {});
/// The last line of the text report (and all of `pao diff --quiet`): "N passed, N failed" counting
/// tensors; over several cases "... (tensors); cases: P of N pass, F fail[, R not run]".
std::string summary_line(const DiffReport& report);
std::string render_json(const DiffReport& report);
std::string render_junit(const DiffReport& report);

}  // namespace pao::diff

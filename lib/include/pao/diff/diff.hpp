// `pao diff`: a vendor's outputs against goldens. ACTUAL may hold any subset of the output names
// (decode: out, v1.out, v2.out, v2.tmp_out, v2.max_logits, v2.exp_sums — vLLM's tmp_out,
// max_logits and exp_sums are accepted for the v2.* ones, and `output` for out; prefix: out,
// prefix.out), as a safetensors file or a folder of <name>.npy files. With `reduce`, the oracle's V2
// reduce also runs on the vendor's partials, which tells a partial-kernel bug from a reduce-kernel
// bug.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/diff/compare.hpp"

namespace pao::golden {
class TensorFile;
}
namespace pao::diff {
class GoldenView;
}

namespace pao::diff {

struct DiffOptions {
  bool reduce = false;
  std::vector<PolicyOverride> overrides;
  /// Check each golden's invariants of attention before comparing (golden/invariants.hpp). Only a
  /// caller that has just checked the golden itself (`pao audit`, diffing one golden many times)
  /// turns it off.
  bool check_invariants = true;
  /// A vendor tensor whose dtype differs from the golden's fails, unless this is set (then its
  /// values are compared and a note says so).
  bool allow_dtype_mismatch = false;
  /// Folders of cases: diff only the cases whose id matches this shell glob ("decode-*-bf16-*").
  std::string cases_glob;
  /// Folders of cases: a case ACTUAL has no outputs for is "not run" (neither passed nor failed)
  /// instead of a failure.
  bool allow_missing = false;
};

/// The name the oracle's reduce of the vendor's partials is reported under (and the name
/// --policy overrides use for it).
inline constexpr const char* kReduceName = "reduce(v2 partials)";

struct CaseReport {
  std::string case_id;
  std::string description;
  std::filesystem::path golden, actual;
  std::vector<TensorReport> tensors;
  std::vector<std::string> notes;  // ignored tensors, dtype differences, --reduce remarks
  /// Outputs of the case's kind that ACTUAL does not hold and that the verdict does without (V2's
  /// partials, the other kernel's final output): listed, never passed. A required output that is
  /// absent (every final output of an attention case, either cache of a cache write) is a failing
  /// tensor instead.
  std::vector<std::string> not_compared;
  std::string reduce_verdict;  // with --reduce
  std::string error;           // the case could not be diffed (no ACTUAL for it, ...): it fails
  bool not_run = false;        // --allow-missing: ACTUAL has no outputs for it (not counted)
  /// What the case is named as failing by: the most telling verdict of its failing tensors (the
  /// most specific pattern, the first tensor on a tie), and that tensor; none when all passed.
  Verdict cause;
  std::string cause_tensor;
  /// The dtypes the case runs in, "f16" or "bf16 with an fp8_e4m3 cache" (the suite's dtype-path
  /// cause compares them across cases).
  std::string dtype_path;

  std::int64_t passed_count() const;
  std::int64_t failed_count() const;    // failing tensors, or 1 for a case with an error (0 if not run)
  std::int64_t compared_count() const;  // tensors whose values were compared (passing or failing)
  bool passed() const { return failed_count() == 0; }
};

struct DiffReport {
  std::vector<CaseReport> cases;
  std::vector<std::string> notes;  // e.g. ACTUAL files that match no golden
  /// Across the cases of a folder: the failing cases are exactly those of one dtype path (only
  /// the fp8-cache cases, only bf16), said as one line; empty when no such path exists.
  std::string dtype_pattern;
  std::int64_t passed() const;
  std::int64_t failed() const;
  std::int64_t not_run() const;  // cases
  /// Tensors whose values were compared. Zero is never a pass: `pao diff` exits 1 and says so.
  std::int64_t compared() const;
  std::int64_t not_compared() const;  // CaseReport::not_compared, over all cases
};

/// The dtype-path line of DiffReport::dtype_pattern for these cases ("" when none applies): the
/// failing cases (2+ cases compared) are exactly those of one activation dtype or cache format.
std::string dtype_path_cause(const std::vector<CaseReport>& cases);

/// The canonical output name of a tensor name in ACTUAL, or "" if it is not an output.
std::string canonical_output_name(std::string_view name, cases::CaseKernel kernel);

/// One golden (a .safetensors file or an npy folder) against one ACTUAL. Throws pao::Error for a
/// malformed or non-golden GOLDEN, an unreadable ACTUAL, or an ACTUAL that holds no output.
CaseReport diff_case(const std::filesystem::path& golden, const std::filesystem::path& actual,
                     const DiffOptions& options);
/// The same on files already open, or held in memory (TensorFile::in_memory: a golden just made and
/// a GPU run's outputs, as pao-cuda-check judges them).
CaseReport diff_case(const golden::TensorFile& golden, const golden::TensorFile& actual,
                     const DiffOptions& options);
/// The same against a golden already opened for diffing, whose tensors and exact partials stay
/// loaded for the next diff (diff/golden_view.hpp).
CaseReport diff_case(const GoldenView& golden, const golden::TensorFile& actual, const DiffOptions& options);

/// Files or folders. A GOLDEN folder lists its cases in manifest.json (or, without one, holds
/// <id>.safetensors files and npy folders); each case's ACTUAL is found in the ACTUAL folder as
/// <id>.safetensors, <id>/ or the golden's own file name. A golden file against an ACTUAL folder
/// looks its case up the same way. Per-case problems (no ACTUAL, unreadable ACTUAL) become failing
/// cases — with the vendor's own message when ACTUAL holds `<id>.error` (a text file: the kernel
/// could not run the case) — and, with allow_missing, cases without outputs are "not run". A bad
/// GOLDEN, or a cases_glob that matches no case, throws pao::Error.
DiffReport diff_paths(const std::filesystem::path& golden, const std::filesystem::path& actual,
                      const DiffOptions& options);

}  // namespace pao::diff

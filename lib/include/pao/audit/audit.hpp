// `pao audit`: the detection power of `pao diff`, measured. Every mutation of the library runs over
// every case of a suite; each bug must be caught (the diff fails) and each legitimate variation must
// pass. The result is a matrix, mutation x dtype class, of caught (or passed) / applicable cases.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pao/audit/mutations.hpp"
#include "pao/cases/case.hpp"
#include "pao/diff/diff.hpp"

namespace pao::audit {

struct MutationOutcome {
  std::string mutation;
  MutationKind kind = MutationKind::bug;
  std::string not_applicable;  // why the mutation cannot apply ("" when it ran)
  /// Bugs: max |out with the bug - out without it| of the independent kernel, and the oracle's own
  /// kernel error max |kernel - exact| of out; the same as NMSE (sum of squares over sum exact^2).
  /// A bug within twice the error and 4x the NMSE (what the rule allows a legitimate kernel) is not
  /// counted for that case: no sound rule can tell it from a legitimate kernel there.
  double effect = 0, kernel_error = 0, effect_nmse = 0, kernel_nmse = 0;
  bool diff_passed = false;
  std::string failures;  // the failing tensors and criteria, "out: row, nmse; v2.tmp_out: elementwise"
  /// A caught bug: the cause pao diff named for the case (diff::CaseReport::cause), whether a
  /// cause of the bug exists in the case (audit/expected_cause.hpp; or was named anyway), and
  /// whether the named one is it.
  std::string cause;  // "multi-partition (out): the failing sequences are exactly ..."
  bool cause_exists = false, cause_named = false;
  bool as_expected() const {
    return !not_applicable.empty() || (kind == MutationKind::bug ? !diff_passed : diff_passed);
  }
};

struct CaseAudit {
  std::string case_id;
  std::string
      dtype_class;  // "f32", "f16", "bf16", "fp8" or "int8" (a quantised cache under any activation dtype)
  std::vector<MutationOutcome> outcomes;
};

/// "f32", "f16", "bf16", or "fp8" for an fp8 cache, "int8" for a u8 / i8 cache.
std::string dtype_class(const cases::Case& c);

struct AuditOptions {
  std::vector<std::string> mutations;  // empty: every mutation
  diff::DiffOptions diff;
  bool out_only = false;  // vendors hand over `out` only (no V2 partials): the harder test
  /// audit_cases writes each case's golden into a folder of its own made inside this one
  /// (".pao-audit.pao-tmp-<pid>-<n>", io/atomic_file.hpp TemporaryFolder) and removes that folder
  /// when done: nothing else here is read, overwritten or removed.
  std::filesystem::path scratch;
  std::function<void(std::size_t done, std::size_t total, const CaseAudit&)> on_case;
};

std::vector<CaseAudit> audit_cases(const std::vector<cases::Case>& cases, const AuditOptions& options);

struct MatrixCell {
  std::int64_t applicable = 0, as_expected = 0;    // bugs: caught; legitimate: passed
  std::int64_t cause_exists = 0, cause_named = 0;  // caught bugs: a cause to name; the right one named
};
struct AuditMatrix {
  std::vector<std::string> mutations;                              // rows, library order
  std::vector<std::string> dtype_classes;                          // columns: f32 f16 bf16 fp8, those present
  std::map<std::string, std::map<std::string, MatrixCell>> cells;  // [mutation][dtype class]
  std::vector<std::string> misses;   // "window_plus_one on decode-...: passed (a bug not caught)"
  std::vector<std::string> unnamed;  // caught with a cause to name, another named: "bug on case: named X"
  std::int64_t cause_exists() const;
  std::int64_t cause_named() const;
  bool clean() const { return misses.empty(); }
};

AuditMatrix make_matrix(const std::vector<CaseAudit>& audits);

/// What the audit judged nothing of, one line each ("" none): the whole run, when no mutation
/// applied to any case (a suite of reshape_and_cache cases only, or mutations that fit none of its
/// cases); else each mutation of `named` (those --mutations asked for) that applied to no case.
/// Nothing audited is not a pass: `pao audit` exits 1 on any line, as `pao diff` does on nothing
/// compared. `suite_cases`: the cases of the suite, audited or not.
std::vector<std::string> audited_nothing(const std::vector<CaseAudit>& audits, std::size_t suite_cases,
                                         const std::vector<std::string>& named);

std::string render_matrix_text(const AuditMatrix& m);
std::string render_audit_json(const std::vector<CaseAudit>& audits, const AuditMatrix& m);
/// A heat map: green where every applicable case is as expected, red where none is, grey where
/// the mutation applies to no case.
std::string render_matrix_svg(const AuditMatrix& m, const std::string& title);

}  // namespace pao::audit

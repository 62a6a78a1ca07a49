// Running the mutation library over cases and tabulating what `pao diff` catches
// (pao/audit/audit.hpp).
#include "pao/audit/audit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "pao/audit/expected_cause.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/golden_view.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::audit {

namespace fs = std::filesystem;

namespace {

std::string failures_of(const diff::CaseReport& r) {
  if (!r.error.empty()) return "error: " + r.error;
  std::string s;
  for (const auto& t : r.tensors) {
    if (t.passed) continue;
    if (!s.empty()) s += "; ";
    s += t.name + ": ";
    if (!t.problem.empty()) {
      s += t.problem;
    } else if (!t.failed_criteria.empty()) {
      for (std::size_t i = 0; i < t.failed_criteria.size(); ++i) s += (i ? ", " : "") + t.failed_criteria[i];
    } else {
      s += diff::to_string(t.policy.rule);
    }
  }
  return s;
}

const std::vector<std::string> kClassOrder = {"f32", "f16", "bf16", "fp8", "int8"};

const Tensor& output_of(const std::vector<std::pair<std::string, Tensor>>& outputs) {
  for (const auto& [name, t] : outputs)
    if (name == "out") return t;
  fail("mutation outputs hold no 'out'");
}

/// max |a - b|; a NaN or Inf on one side only is an infinite difference.
double max_difference(const Tensor& a, const Tensor& b) {
  const auto x = a.to_f64(), y = b.to_f64();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    const double d = std::fabs(x[i] - y[i]);
    m = std::max(m, std::isnan(d) ? std::numeric_limits<double>::infinity() : d);
  }
  return m;
}

/// sum (a - b)^2 / sum ref^2 over finite elements.
double relative_energy(const Tensor& a, const Tensor& b, const std::vector<double>& ref) {
  const auto x = a.to_f64(), y = b.to_f64();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    den += ref[i] * ref[i];
    const double d = x[i] - y[i];
    if (std::isfinite(d)) num += d * d;
  }
  return den > 0 ? num / den : 0.0;
}

/// The oracle's own error of `out` against out_exact: max and NMSE, the larger of V1's and V2's.
struct OracleError {
  double max = 0, nmse = 0;
};
OracleError oracle_error(const golden::GoldenTensors& g) {
  const Tensor* exact = g.find("out_exact");
  require(exact != nullptr, "audit: the golden has no out_exact");
  const std::vector<double> ref = exact->to_f64();
  OracleError e;
  for (const char* name : {"v1.out", "v2.out", "prefix.out"})
    if (const Tensor* t = g.find(name)) {
      e.max = std::max(e.max, max_difference(*t, *exact));
      e.nmse = std::max(e.nmse, relative_energy(*t, *exact, ref));
    }
  return e;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// One mutation on one case: its outputs, whether they are visible at all, and the diff's verdict.
MutationOutcome run_mutation(const Mutation& mutation, const cases::Case& c, const golden::GoldenTensors& g,
                             const diff::GoldenView& golden, const Tensor& clean, const OracleError& oracle,
                             const std::vector<double>& exact, const diff::DiffOptions& diff_options,
                             bool out_only) {
  MutationOutcome o;
  o.mutation = mutation.name;
  o.kind = mutation.kind;
  o.not_applicable = not_applicable(mutation, c);
  if (o.not_applicable.empty()) {
    auto outputs = vendor_outputs(mutation, c, g);
    if (mutation.kind == MutationKind::bug) {
      o.effect = max_difference(output_of(outputs), clean);
      o.kernel_error = oracle.max;
      o.effect_nmse = relative_energy(output_of(outputs), clean, exact);
      o.kernel_nmse = oracle.nmse;
      // FlashAttention's rule (k = 2) deems a kernel within twice the oracle's error legitimate,
      // the NMSE criterion one within 4x its error energy: a bug that moves out by no more than
      // either, everywhere, cannot be told from a legitimate kernel.
      if (o.effect <= 2 * oracle.max && o.effect_nmse <= 4 * oracle.nmse) {
        o.not_applicable = "its effect on out (max " + sci(o.effect) + ", NMSE " + sci(o.effect_nmse) +
                           ") is within what a legitimate kernel may differ by (2 x " + sci(oracle.max) +
                           ", 4 x " + sci(oracle.nmse) + ")";
        return o;
      }
    }
    std::vector<std::pair<std::string, Tensor>> vendor;
    for (auto& [name, t] : outputs)
      if (!out_only || name == "out") vendor.emplace_back(name, std::move(t));
    add_written_caches(c, g, vendor);
    const golden::TensorFile actual =
        golden::TensorFile::in_memory(c.id + "." + mutation.name, {}, std::move(vendor));
    const diff::CaseReport r = diff::diff_case(golden, actual, diff_options);
    o.diff_passed = r.passed();
    o.failures = failures_of(r);
    if (mutation.kind == MutationKind::bug && !o.diff_passed && r.error.empty()) {
      const ExpectedCause expected = expected_cause(mutation, c, out_only);
      o.cause = diff::to_string(r.cause.pattern) + " (" + r.cause_tensor + "): " + r.cause.detail;
      o.cause_named = expected.named_by(r.cause.pattern);
      o.cause_exists = expected.absent.empty() || o.cause_named;
    }
  }
  return o;
}

}  // namespace

std::string dtype_class(const cases::Case& c) {
  if (c.fp8_cache()) return "fp8";
  if (c.integer_cache()) return "int8";
  return std::string(dtype_name(c.dtype));
}

std::vector<CaseAudit> audit_cases(const std::vector<cases::Case>& cases, const AuditOptions& options) {
  std::vector<const Mutation*> selected;
  if (options.mutations.empty()) {
    for (const auto& m : mutations()) selected.push_back(&m);
  } else {
    for (const auto& name : options.mutations) selected.push_back(&find_mutation(name));
  }
  // Audit's own folder inside the scratch folder: a new one (never one that was there), removed
  // with what it holds at the end, on an error, or by the signal handler; nothing else in the
  // scratch folder is touched (a --scratch holding goldens keeps them). What a killed audit left
  // (its folder, named for its dead process) goes first.
  remove_stale_temporaries(options.scratch, ".pao-audit.pao-tmp-");
  const TemporaryFolder work(options.scratch, "pao-audit");
  std::vector<CaseAudit> out;
  for (const auto& c : cases) {
    // The mutation library plants attention bugs; the cache writes' bugs (reshape_and_cache,
    // write_and_attend) are tested in tests/diff/test_diff_cache_write.cpp and
    // tests/diff/test_diff_write_and_attend.cpp.
    if (!kinds::kind_of(c).traits().attends) continue;
    CaseAudit a;
    a.case_id = c.id;
    a.dtype_class = dtype_class(c);
    const golden::GoldenTensors g = golden::make_golden(c);
    // The golden as a vendor's harness reads it (written and read back), opened once for every
    // mutation's diff, its invariants checked once.
    const fs::path golden_path = work.path() / (c.id + ".safetensors");
    write_safetensors(golden_path, g.views(), g.metadata);
    const diff::GoldenView golden(golden::TensorFile::open(golden_path));
    golden::require_golden_invariants(golden.file());
    diff::DiffOptions diff_options = options.diff;
    diff_options.check_invariants = false;
    const OracleError oracle = oracle_error(g);
    const std::vector<double> exact = g.find("out_exact")->to_f64();
    const Tensor clean =
        Tensor::copy_of(output_of(vendor_outputs(find_mutation("independent_kernel"), c, g)).view());
    // The mutations of a case run side by side, against the one view of the golden; the kernels
    // inside them then run on one thread each.
    a.outcomes.resize(selected.size());
    std::vector<std::exception_ptr> errors(selected.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t k = 0; k < selected.size(); ++k) {
      try {
        a.outcomes[k] =
            run_mutation(*selected[k], c, g, golden, clean, oracle, exact, diff_options, options.out_only);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    fs::remove(golden_path);
    out.push_back(std::move(a));
    if (options.on_case) options.on_case(out.size(), cases.size(), out.back());
  }
  return out;
}

AuditMatrix make_matrix(const std::vector<CaseAudit>& audits) {
  AuditMatrix m;
  std::set<std::string> classes;
  for (const auto& a : audits) classes.insert(a.dtype_class);
  for (const auto& k : kClassOrder)
    if (classes.count(k)) m.dtype_classes.push_back(k);
  for (const auto& a : audits) {
    for (const auto& o : a.outcomes) {
      if (std::find(m.mutations.begin(), m.mutations.end(), o.mutation) == m.mutations.end())
        m.mutations.push_back(o.mutation);
      MatrixCell& cell = m.cells[o.mutation][a.dtype_class];
      if (!o.not_applicable.empty()) continue;
      ++cell.applicable;
      cell.cause_exists += o.cause_exists;
      cell.cause_named += o.cause_named;
      if (o.cause_exists && !o.cause_named)
        m.unnamed.push_back(o.mutation + " on " + a.case_id + ": " + o.cause);
      if (o.as_expected()) {
        ++cell.as_expected;
      } else {
        m.misses.push_back(o.mutation + " on " + a.case_id + ": " +
                           (o.kind == MutationKind::bug
                                ? "passed pao diff (a bug not caught)"
                                : "failed pao diff (a legitimate kernel refused): " + o.failures));
      }
    }
  }
  return m;
}

std::vector<std::string> audited_nothing(const std::vector<CaseAudit>& audits, std::size_t suite_cases,
                                         const std::vector<std::string>& named) {
  // Per mutation: the cases it applied to, and the first reason it did not.
  std::map<std::string, std::pair<std::int64_t, std::string>> applied;
  std::int64_t total = 0;
  for (const auto& a : audits)
    for (const auto& o : a.outcomes) {
      auto& [n, why] = applied[o.mutation];
      if (o.not_applicable.empty()) {
        ++n, ++total;
      } else if (why.empty()) {
        why = a.case_id + ": " + o.not_applicable;
      }
    }
  if (audits.empty())
    return {"none of the " + std::to_string(suite_cases) +
            " cases attends (the mutation library plants attention bugs; reshape_and_cache writes are "
            "judged by pao diff's cache rules): nothing was audited, which is not a pass"};
  if (total == 0)
    return {"no mutation applies to any of the " + std::to_string(audits.size()) + " cases audited (" +
            (applied.empty() ? std::string("no mutation ran")
                             : "e.g. " + applied.begin()->first + " on " + applied.begin()->second.second) +
            "): nothing was audited, which is not a pass"};
  std::vector<std::string> lines;
  for (const auto& name : named)
    if (const auto it = applied.find(name); it != applied.end() && it->second.first == 0)
      lines.push_back(name + " applies to none of the " + std::to_string(audits.size()) +
                      " cases audited (e.g. " + it->second.second +
                      "): it was not audited, which is not a pass");
  return lines;
}

std::int64_t AuditMatrix::cause_exists() const {
  std::int64_t n = 0;
  for (const auto& [mutation, row] : cells)
    for (const auto& [k, cell] : row) n += cell.cause_exists;
  return n;
}

std::int64_t AuditMatrix::cause_named() const {
  std::int64_t n = 0;
  for (const auto& [mutation, row] : cells)
    for (const auto& [k, cell] : row) n += cell.cause_named;
  return n;
}

std::string render_matrix_text(const AuditMatrix& m) {
  std::string s;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-30s %-5s", "mutation", "kind");
  s += buf;
  for (const auto& k : m.dtype_classes) {
    std::snprintf(buf, sizeof buf, " %9s", k.c_str());
    s += buf;
  }
  s += "      cause\n";
  for (const auto& name : m.mutations) {
    const Mutation& mu = find_mutation(name);
    std::snprintf(buf, sizeof buf, "%-30s %-5s", name.c_str(),
                  mu.kind == MutationKind::bug ? "bug" : "legit");
    s += buf;
    for (const auto& k : m.dtype_classes) {
      const auto it = m.cells.at(name).find(k);
      const MatrixCell cell = it == m.cells.at(name).end() ? MatrixCell{} : it->second;
      if (cell.applicable == 0) {
        std::snprintf(buf, sizeof buf, " %9s", "-");
      } else {
        std::snprintf(buf, sizeof buf, " %4lld/%-4lld", static_cast<long long>(cell.as_expected),
                      static_cast<long long>(cell.applicable));
      }
      s += buf;
    }
    MatrixCell total;
    for (const auto& [k, cell] : m.cells.at(name)) {
      total.cause_exists += cell.cause_exists;
      total.cause_named += cell.cause_named;
    }
    if (total.cause_exists == 0) {
      s += "          -";
    } else {
      std::snprintf(buf, sizeof buf, "  %4lld/%-4lld", static_cast<long long>(total.cause_named),
                    static_cast<long long>(total.cause_exists));
      s += buf;
    }
    s += "\n";
  }
  s += "cells: bugs caught / cases it applies to; legit: passed / cases; -: applies to no case\n"
       "cause: the right cause named / caught (bug, case) pairs where the case shows one; -: none does\n";
  if (m.cause_exists() > 0) {
    std::snprintf(buf, sizeof buf, "right cause named: %lld of %lld (%.1f%%)\n",
                  static_cast<long long>(m.cause_named()), static_cast<long long>(m.cause_exists()),
                  100.0 * static_cast<double>(m.cause_named()) / static_cast<double>(m.cause_exists()));
    s += buf;
  }
  return s;
}

std::string render_audit_json(const std::vector<CaseAudit>& audits, const AuditMatrix& m) {
  using nlohmann::json;
  json j;
  j["dtype_classes"] = m.dtype_classes;
  json rows = json::array();
  for (const auto& name : m.mutations) {
    json row;
    row["mutation"] = name;
    row["kind"] = find_mutation(name).kind == MutationKind::bug ? "bug" : "legitimate";
    for (const auto& [k, cell] : m.cells.at(name))
      row["cells"][k] = {{"applicable", cell.applicable},
                         {"as_expected", cell.as_expected},
                         {"cause_exists", cell.cause_exists},
                         {"cause_named", cell.cause_named}};
    rows.push_back(row);
  }
  j["matrix"] = rows;
  j["misses"] = m.misses;
  j["cause_exists"] = m.cause_exists();
  j["cause_named"] = m.cause_named();
  j["unnamed"] = m.unnamed;
  j["clean"] = m.clean();
  json cases = json::array();
  for (const auto& a : audits) {
    json c;
    c["case_id"] = a.case_id;
    c["dtype_class"] = a.dtype_class;
    for (const auto& o : a.outcomes) {
      json x;
      if (o.kind == MutationKind::bug && o.kernel_error > 0) {
        x["effect"] = o.effect;
        x["kernel_error"] = o.kernel_error;
        x["effect_nmse"] = o.effect_nmse;
        x["kernel_nmse"] = o.kernel_nmse;
      }
      if (!o.not_applicable.empty()) {
        x["not_applicable"] = o.not_applicable;
      } else {
        x["diff_passed"] = o.diff_passed;
        x["as_expected"] = o.as_expected();
        if (!o.failures.empty()) x["failures"] = o.failures;
        if (!o.cause.empty()) {
          x["cause"] = o.cause;
          x["cause_exists"] = o.cause_exists;
          x["cause_named"] = o.cause_named;
        }
      }
      c["outcomes"][o.mutation] = x;
    }
    cases.push_back(c);
  }
  j["cases"] = cases;
  return j.dump(1) + "\n";
}

std::string render_matrix_svg(const AuditMatrix& m, const std::string& title) {
  const int cell_w = 90, cell_h = 22, left = 230, top = 60;
  const int width = left + cell_w * static_cast<int>(m.dtype_classes.size()) + 20;
  const int height = top + cell_h * static_cast<int>(m.mutations.size()) + 40;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) +
                  "\" font-family=\"monospace\" font-size=\"12\">\n";
  auto escape = [](const std::string& t) {
    std::string r;
    for (char ch : t) r += ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : std::string(1, ch);
    return r;
  };
  s += "<text x=\"10\" y=\"22\" font-size=\"14\">" + escape(title) + "</text>\n";
  for (std::size_t j = 0; j < m.dtype_classes.size(); ++j)
    s += "<text x=\"" + std::to_string(left + cell_w * static_cast<int>(j) + cell_w / 2) + "\" y=\"" +
         std::to_string(top - 8) + "\" text-anchor=\"middle\">" + m.dtype_classes[j] + "</text>\n";
  for (std::size_t i = 0; i < m.mutations.size(); ++i) {
    const std::string& name = m.mutations[i];
    const int y = top + cell_h * static_cast<int>(i);
    const bool bug = find_mutation(name).kind == MutationKind::bug;
    s +=
        "<text x=\"10\" y=\"" + std::to_string(y + 15) + "\">" + (bug ? "" : "(legit) ") + name + "</text>\n";
    for (std::size_t j = 0; j < m.dtype_classes.size(); ++j) {
      const auto it = m.cells.at(name).find(m.dtype_classes[j]);
      const MatrixCell cell = it == m.cells.at(name).end() ? MatrixCell{} : it->second;
      const std::string fill = cell.applicable == 0                  ? "#dddddd"
                               : cell.as_expected == cell.applicable ? "#4caf50"
                               : cell.as_expected == 0               ? "#e53935"
                                                                     : "#ffb300";
      const int x = left + cell_w * static_cast<int>(j);
      s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           std::to_string(cell_w - 2) + "\" height=\"" + std::to_string(cell_h - 2) + "\" fill=\"" + fill +
           "\"/>\n";
      const std::string label =
          cell.applicable == 0 ? "-"
                               : std::to_string(cell.as_expected) + "/" + std::to_string(cell.applicable);
      s += "<text x=\"" + std::to_string(x + cell_w / 2 - 1) + "\" y=\"" + std::to_string(y + 15) +
           "\" text-anchor=\"middle\">" + label + "</text>\n";
    }
  }
  s += "<text x=\"10\" y=\"" + std::to_string(height - 12) +
       "\">bugs: caught / applicable; legit: passed / applicable; grey: applies to no case</text>\n";
  return s + "</svg>\n";
}

}  // namespace pao::audit

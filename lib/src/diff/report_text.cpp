// The human-readable diff report (pao/diff/report.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "pao/diff/report.hpp"

namespace pao::diff {

namespace {

std::string sci(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

std::string value(double v) {
  if (!std::isfinite(v)) return sci(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string percent(std::int64_t part, std::int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

std::string index_text(const Shape& index) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < index.size(); ++i) os << (i ? ", " : "") << index[i];
  os << "]";
  return os.str();
}

std::string criterion(const TensorReport& t) {
  std::ostringstream os;
  switch (t.policy.rule) {
    case Rule::flash:
      os << "flash: max|a - exact| " << sci(t.max_abs_error) << (t.max_abs_error <= t.bound ? " <= " : " > ")
         << t.policy.k << " x " << sci(t.kernel_error) << " + " << sci(t.floor) << " = " << sci(t.bound);
      break;
    case Rule::elementwise:
      os << "elementwise: |a - e| <= " << t.policy.atol << " + " << t.policy.rtol << " |e| vs " << t.reference
         << " (max |a - e| " << sci(t.max_abs_error) << ")";
      break;
    case Rule::nmse:
      os << "nmse " << sci(t.nmse) << (t.passed ? " <= " : " > ") << sci(t.policy.nmse) << " vs "
         << t.reference;
      break;
    case Rule::bitwise:
      os << "bitwise: " << t.mismatched << " of " << t.compared << " elements differ from " << t.reference;
      break;
  }
  return os.str();
}

void summary(std::ostringstream& os, const char* title, const char* unit, const std::vector<Tally>& tallies,
             std::size_t max_rows, bool show_max = true) {
  if (tallies.empty()) return;
  std::size_t shown = 0, bad = 0;
  std::ostringstream rows;
  for (std::size_t i = 0; i < tallies.size(); ++i) {
    const Tally& t = tallies[i];
    if (t.mismatched == 0) continue;
    ++bad;
    if (shown == max_rows) continue;
    rows << (shown ? " | " : "") << unit << " " << i << ": " << t.mismatched << "/" << t.compared;
    if (show_max) {  // a row of nothing but NaN has no finite error: say NaN, not max 0
      rows << " max " << sci(t.max_abs);
      if (t.nonfinite > 0) rows << " (" << t.nonfinite << " NaN/Inf)";
    }
    ++shown;
  }
  if (bad == 0) return;
  os << "      " << title << rows.str();
  if (bad > shown) os << " | ... (" << bad - shown << " more)";
  os << "   [" << tallies.size() - bad << " of " << tallies.size() << " clean]\n";
}

void worst(std::ostringstream& os, const char* what, const ElementError& e) {
  os << "      worst " << what << " " << sci(what[0] == 'a' ? e.abs_error : e.rel_error) << " at "
     << index_text(e.location.index) << " = " << describe(e.location) << "\n"
     << "        actual " << value(e.actual) << ", expected " << value(e.expected) << "\n";
}

void tensor_text(std::ostringstream& os, const TensorReport& t, const TextOptions& options) {
  char head[64];
  std::snprintf(head, sizeof head, "  %-20s %s  ", t.name.c_str(), t.passed ? "PASS" : "FAIL");
  os << head;
  if (!t.problem.empty()) {
    os << "not compared: " << t.actual_name << ": " << t.problem << "\n";
    return;
  }
  os << criterion(t) << "\n";
  // The other criteria of the flash rule: always when one failed, with --verbose otherwise.
  if (t.criteria.size() > 1 && (!t.failed_criteria.empty() || options.verbose)) {
    os << "      criteria:";
    for (const auto& c : t.criteria) {
      if (c.name == "global") continue;
      os << "  " << c.name << " " << sci(c.value) << (c.passed ? " <= " : " > ") << sci(c.bound)
         << (c.passed ? "" : " FAIL") << (c.where.empty() || c.passed ? "" : " at " + c.where);
    }
    os << "\n";
  }
  if (t.passed && !options.verbose) return;
  if (t.policy.rule == Rule::bitwise &&
      !t.worst_abs) {  // a cache write (no worst element): where, the pattern
    if (!t.passed)
      os << "      pattern: " << to_string(t.verdict.pattern) << " — " << t.verdict.detail << "\n";
    summary(os, "per seq:       ", "seq", t.per_seq, options.max_rows, false);
    summary(os, "per kv head:   ", "head", t.per_head, options.max_rows, false);
    return;
  }
  os << "      mismatched " << t.mismatched << " of " << t.compared << " ("
     << percent(t.mismatched, t.compared) << ")";
  if (t.excluded > 0) os << "; " << t.excluded << " excluded (partitions past a sequence's end)";
  if (t.nonfinite > 0) os << "; " << t.nonfinite << " NaN/Inf";
  os << "; nmse " << sci(t.nmse) << "\n";
  if (t.name != t.actual_name) os << "      actual: " << t.actual_name << "\n";
  if (t.worst_abs) worst(os, "abs", *t.worst_abs);
  if (t.worst_rel && (!t.worst_abs || t.worst_rel->location.flat != t.worst_abs->location.flat))
    worst(os, "rel", *t.worst_rel);
  if (!t.passed) os << "      pattern: " << to_string(t.verdict.pattern) << " — " << t.verdict.detail << "\n";
  summary(os, "per seq:       ", "seq", t.per_seq, options.max_rows);
  summary(os, "per head:      ", "head", t.per_head, options.max_rows);
  summary(os, "per partition: ", "p", t.per_partition, options.max_rows);
  os << "      ulps of " << dtype_name(t.golden_dtype) << ":";
  const auto& labels = UlpHistogram::labels();
  for (std::size_t b = 0; b < labels.size(); ++b)
    if (t.ulp_histogram.counts[b] > 0) os << "  " << labels[b] << ": " << t.ulp_histogram.counts[b];
  os << "\n";
}

}  // namespace

std::string render_tensor_text(const TensorReport& tensor, const TextOptions& options) {
  std::ostringstream os;
  tensor_text(os, tensor, options);
  return os.str();
}

std::string render_text(const DiffReport& report, const TextOptions& options) {
  std::ostringstream os;
  for (const auto& c : report.cases) {
    if (c.not_run) {
      os << "case " << c.case_id << "  NOT RUN (no outputs in " << c.actual.string()
         << "; --allow-missing)\n\n";
      continue;
    }
    os << "case " << c.case_id << (c.passed() ? "  PASS" : "  FAIL") << "\n";
    if (!c.description.empty()) os << "  " << c.description << "\n";
    os << "  golden " << c.golden.string() << "\n  actual " << c.actual.string() << "\n";
    if (!c.error.empty()) os << "  ERROR  " << c.error << "\n";
    for (const auto& t : c.tensors) tensor_text(os, t, options);
    if (c.failed_count() > 1 && c.cause.pattern != Pattern::none)  // one line for the case
      os << "  cause (from " << c.cause_tensor << "): " << to_string(c.cause.pattern) << " — "
         << c.cause.detail << "\n";
    if (!c.not_compared.empty()) {
      os << "  not compared (ACTUAL lacks them; the verdict is without them):";
      for (std::size_t i = 0; i < c.not_compared.size(); ++i) os << (i ? ", " : " ") << c.not_compared[i];
      os << "\n";
    }
    if (!c.reduce_verdict.empty()) os << "  --reduce: " << c.reduce_verdict << "\n";
    for (const auto& n : c.notes) os << "  note: " << n << "\n";
    os << "\n";
  }
  for (const auto& n : report.notes) os << "note: " << n << "\n";
  if (!report.dtype_pattern.empty())
    os << "pattern across cases: dtype-path — " << report.dtype_pattern << "\n";
  os << summary_line(report) << "\n";
  return os.str();
}

std::string summary_line(const DiffReport& report) {
  std::ostringstream os;
  os << report.passed() << " passed, " << report.failed() << " failed";
  if (report.cases.size() > 1) {
    std::int64_t passed_cases = 0, failed_cases = 0;
    for (const auto& c : report.cases) {
      if (c.not_run) continue;
      ++(c.passed() ? passed_cases : failed_cases);
    }
    os << " (tensors); cases: " << passed_cases << " of " << report.cases.size() << " pass, " << failed_cases
       << " fail";
    if (report.not_run() > 0) os << ", " << report.not_run() << " not run";
  } else if (report.not_run() > 0) {
    os << ", " << report.not_run() << " case(s) not run";
  }
  if (report.not_compared() > 0) {
    std::vector<std::string> names;  // distinct, in first-seen order
    for (const auto& c : report.cases)
      for (const auto& n : c.not_compared)
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    os << "; not compared: " << report.not_compared() << " tensor(s) ACTUAL lacks (";
    for (std::size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
    os << ")";
  }
  if (report.compared() == 0) os << "; nothing was compared, which is not a pass";
  return os.str();
}

}  // namespace pao::diff

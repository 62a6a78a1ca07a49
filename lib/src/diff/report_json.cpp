// The JSON diff report (pao/diff/report.hpp). Non-finite numbers are written as the strings
// "nan", "inf" and "-inf" (JSON has no such numbers).
#include <cmath>
#include <nlohmann/json.hpp>

#include "pao/diff/report.hpp"

namespace pao::diff {

namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

/// with_error: the largest finite |actual - expected| too (not for bitwise caches: codes, not values).
ojson tallies(const std::vector<Tally>& v, const char* key, bool with_error = true) {
  ojson out = ojson::array();
  for (std::size_t i = 0; i < v.size(); ++i) {
    ojson t = {{key, i}, {"compared", v[i].compared}, {"mismatched", v[i].mismatched}};
    if (with_error) t["max_abs_error"] = number(v[i].max_abs);
    out.push_back(t);
  }
  return out;
}

ojson element(const ElementError& e) {
  const Location& l = e.location;
  ojson j;
  j["index"] = l.index;
  j["flat_index"] = l.flat;
  if (l.coords.token >= 0) {
    j["token"] = l.coords.token;
    j["position"] = l.position;
  }
  j["seq"] = l.coords.seq;
  j["head"] = l.coords.head;
  if (l.coords.dim >= 0) j["dim"] = l.coords.dim;
  if (l.coords.partition >= 0) j["partition"] = l.coords.partition;
  if (l.token_end > l.token_begin) j["tokens"] = {l.token_begin, l.token_end};
  if (l.block_end > l.block_begin) {
    j["logical_blocks"] = {l.block_begin, l.block_end};
    j["physical_blocks"] = l.physical_blocks;
  }
  j["actual"] = number(e.actual);
  j["expected"] = number(e.expected);
  j["abs_error"] = number(e.abs_error);
  j["rel_error"] = number(e.rel_error);
  return j;
}

ojson tensor_json(const CaseReport& c, const TensorReport& t) {
  ojson j;
  j["case_id"] = c.case_id;
  j["name"] = t.name;
  j["status"] = t.passed ? "PASS" : "FAIL";
  j["actual_name"] = t.actual_name;
  j["reference"] = t.reference;
  j["rule"] = to_string(t.policy.rule);
  if (!t.problem.empty()) {
    j["problem"] = t.problem;
    return j;
  }
  if (t.policy.rule == Rule::flash) {
    j["threshold"] = {{"k", t.policy.k},
                      {"kernel_error", number(t.kernel_error)},
                      {"floor", number(t.floor)},
                      {"bound", number(t.bound)}};
    ojson criteria = ojson::array();
    for (const auto& c : t.criteria)
      criteria.push_back({{"name", c.name},
                          {"value", number(c.value)},
                          {"bound", number(c.bound)},
                          {"passed", c.passed},
                          {"where", c.where}});
    j["criteria"] = criteria;
  } else if (t.policy.rule == Rule::elementwise) {
    j["threshold"] = {{"atol", t.policy.atol}, {"rtol", t.policy.rtol}};
  } else if (t.policy.rule == Rule::bitwise &&
             !t.worst_abs) {  // a written cache: mismatches, pattern, per seq / head
    j["threshold"] = {{"mismatched", 0}};
    j["golden_dtype"] = std::string(dtype_name(t.golden_dtype));
    j["actual_dtype"] = std::string(dtype_name(t.actual_dtype));
    j["shape"] = t.shape;
    j["compared"] = t.compared;
    j["mismatched"] = t.mismatched;
    j["pattern"] = to_string(t.verdict.pattern);
    j["pattern_detail"] = t.verdict.detail;
    j["per_seq"] = tallies(t.per_seq, "seq", false);
    j["per_kv_head"] = tallies(t.per_head, "head", false);
    return j;
  } else if (t.policy.rule == Rule::bitwise) {
    j["threshold"] = {{"mismatched", 0}};
  } else {
    j["threshold"] = {{"nmse", t.policy.nmse}};
  }
  j["golden_dtype"] = std::string(dtype_name(t.golden_dtype));
  j["actual_dtype"] = std::string(dtype_name(t.actual_dtype));
  j["shape"] = t.shape;
  j["compared"] = t.compared;
  j["excluded"] = t.excluded;
  j["mismatched"] = t.mismatched;
  j["mismatched_pct"] =
      t.compared > 0 ? 100.0 * static_cast<double>(t.mismatched) / static_cast<double>(t.compared) : 0.0;
  j["nonfinite"] = t.nonfinite;
  j["max_abs_error"] = number(t.max_abs_error);
  j["max_rel_error"] = number(t.max_rel_error);
  j["nmse"] = number(t.nmse);
  j["worst"] = t.worst_abs ? element(*t.worst_abs) : ojson(nullptr);
  j["worst_rel"] = t.worst_rel ? element(*t.worst_rel) : ojson(nullptr);
  j["pattern"] = to_string(t.verdict.pattern);
  j["pattern_detail"] = t.verdict.detail;
  j["per_seq"] = tallies(t.per_seq, "seq");
  j["per_head"] = tallies(t.per_head, "head");
  if (!t.per_partition.empty()) j["per_partition"] = tallies(t.per_partition, "partition");
  ojson hist = ojson::object();
  const auto& labels = UlpHistogram::labels();
  for (std::size_t b = 0; b < labels.size(); ++b) hist[labels[b]] = t.ulp_histogram.counts[b];
  j["ulp_histogram"] = hist;
  return j;
}

}  // namespace

std::string render_json(const DiffReport& report) {
  ojson j;
  j["pao_version"] = PAO_VERSION;
  j["passed"] = report.passed();
  j["failed"] = report.failed();
  j["not_run"] = report.not_run();
  j["compared"] = report.compared();
  j["not_compared"] = report.not_compared();
  j["summary"] = summary_line(report);
  j["cases"] = ojson::array();
  j["tensors"] = ojson::array();
  for (const auto& c : report.cases) {
    ojson cj;
    cj["case_id"] = c.case_id;
    cj["status"] = c.not_run ? "NOT RUN" : c.passed() ? "PASS" : "FAIL";
    cj["description"] = c.description;
    cj["golden"] = c.golden.string();
    cj["actual"] = c.actual.string();
    cj["passed"] = c.passed_count();
    cj["failed"] = c.failed_count();
    cj["not_compared"] = c.not_compared;
    if (!c.error.empty()) cj["error"] = c.error;
    if (!c.reduce_verdict.empty()) cj["reduce_verdict"] = c.reduce_verdict;
    cj["notes"] = c.notes;
    if (c.cause.pattern != Pattern::none)
      cj["cause"] = {
          {"pattern", to_string(c.cause.pattern)}, {"detail", c.cause.detail}, {"tensor", c.cause_tensor}};
    j["cases"].push_back(cj);
    for (const auto& t : c.tensors) j["tensors"].push_back(tensor_json(c, t));
  }
  j["notes"] = report.notes;
  if (!report.dtype_pattern.empty()) j["dtype_pattern"] = report.dtype_pattern;
  return j.dump(2) + "\n";
}

}  // namespace pao::diff

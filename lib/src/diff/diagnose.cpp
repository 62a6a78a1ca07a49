// Naming a failing final output (pao/diff/diagnose.hpp).
#include "pao/diff/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include "pao/cases/case_tensors.hpp"
#include "pao/golden/reader.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::diff {

namespace {

using cases::CaseKernel;

/// One convention a vendor may have chosen differently, applied to the kernel's arguments.
struct Variant {
  std::string name;
  kinds::KernelKind::ConventionChange apply;
};

std::vector<Variant> variants_of(const cases::Case& c) {
  std::vector<Variant> v;
  const bool fp8 = c.fp8_cache();
  if (fp8) {
    v.push_back({"k_scale and v_scale ignored", [](AttentionOptions& o, NewKVSource&) {
                   o.k_scale = o.v_scale = 1.0f;
                   o.k_head_scales.clear();
                   o.v_head_scales.clear();
                 }});
    v.push_back({"k_scale ignored", [](AttentionOptions& o, NewKVSource&) {
                   o.k_scale = 1.0f;
                   o.k_head_scales.clear();
                 }});
    v.push_back({"v_scale ignored", [](AttentionOptions& o, NewKVSource&) {
                   o.v_scale = 1.0f;
                   o.v_head_scales.clear();
                 }});
  }
  if (c.integer_cache()) {
    // Zero points of 0, as the kernel reads them: code * scale.
    auto zeros = std::make_shared<std::vector<Tensor>>();
    v.push_back({"the zero points ignored (code * scale)", [zeros](AttentionOptions& o, NewKVSource&) {
                   for (TensorView* zp : {&o.kv_quant.key_zero_point, &o.kv_quant.value_zero_point}) {
                     zeros->emplace_back(zp->dtype, zp->shape);
                     *zp = zeros->back().view();
                   }
                 }});
  }
  if (c.sliding_window > 0) {
    v.push_back(
        {"the sliding window ignored", [](AttentionOptions& o, NewKVSource&) { o.sliding_window = 0; }});
    v.push_back({"the sliding window one token wider (W + 1)",
                 [](AttentionOptions& o, NewKVSource&) { o.sliding_window += 1; }});
    if (c.sliding_window > 1)
      v.push_back({"the sliding window one token narrower (W - 1)",
                   [](AttentionOptions& o, NewKVSource&) { o.sliding_window -= 1; }});
  }
  if (c.alibi) v.push_back({"ALiBi ignored", [](AttentionOptions& o, NewKVSource&) { o.alibi_slopes = {}; }});
  if (c.soft_cap > 0)
    v.push_back({"the soft-cap ignored", [](AttentionOptions& o, NewKVSource&) { o.soft_cap = 0; }});
  if (kinds::kind_of(c).traits().new_tokens && (fp8 || c.integer_cache()) && c.cache_new_tokens)
    v.push_back({"the new tokens read from the other source (key / value vs the quantised cache)",
                 [](AttentionOptions&, NewKVSource& s) {
                   s = s == NewKVSource::cache ? NewKVSource::input : NewKVSource::cache;
                 }});
  return v;
}

/// The exact output of the golden's tensors with `variant` applied, as doubles.
std::vector<double> exact_with(const golden::GoldenTensors& g, const Variant& variant) {
  return kinds::kind_of(g.golden_case).exact_with(g, variant.apply).to_f64();
}

std::string sci(double v) {
  std::ostringstream os;
  os.precision(3);
  os << std::scientific << v;
  return os.str();
}

}  // namespace

std::optional<double> uniform_ratio(const std::vector<double>& actual, const std::vector<double>& expected) {
  double max_e = 0;
  for (double e : expected)
    if (std::isfinite(e)) max_e = std::max(max_e, std::fabs(e));
  if (max_e == 0 || actual.size() != expected.size()) return std::nullopt;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (std::isfinite(actual[i]) && std::isfinite(expected[i]) && std::fabs(expected[i]) >= 0.05 * max_e)
      ratios.push_back(actual[i] / expected[i]);
  if (ratios.size() < 8) return std::nullopt;
  std::vector<double> sorted = ratios;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2),
                   sorted.end());
  const double m = sorted[sorted.size() / 2];
  if (!(std::fabs(m - 1.0) > 0.05) || m == 0) return std::nullopt;
  const auto close =
      std::count_if(ratios.begin(), ratios.end(), [m](double r) { return std::fabs(r / m - 1) <= 0.02; });
  if (static_cast<double>(close) < 0.9 * static_cast<double>(ratios.size())) return std::nullopt;
  return m;
}

std::optional<Verdict> uniform_ratio_verdict(const std::vector<double>& actual,
                                             const std::vector<double>& expected) {
  const auto r = uniform_ratio(actual, expected);
  if (!r) return std::nullopt;
  std::ostringstream os;
  os.precision(4);
  os << "actual = " << *r << " x expected on at least 90% of the elements of weight (a factor applied "
     << (std::fabs(*r) > 1 ? "twice or not divided out" : "twice or not multiplied in") << ": a scale?)";
  return Verdict{Pattern::uniform_ratio, os.str()};
}

std::optional<Verdict> diagnose_output(const golden::GoldenTensors& g, const TensorReport& report,
                                       const Tensor& actual) {
  const cases::Case& c = g.golden_case;
  if (report.passed || !report.problem.empty() || !kinds::kind_of(c).traits().attends) return std::nullopt;
  // NaN / Inf where the golden is finite is named by where it is (nan-inf, the unused slots read):
  // no convention changed explains a non-finite output, however an all-inf output "matches".
  if (report.nonfinite > 0) return std::nullopt;
  const std::vector<double> a = actual.to_f64();
  const Tensor* exact = g.find("out_exact");
  double max_exact = 0;
  const std::vector<double> exact_values = exact != nullptr ? exact->to_f64() : std::vector<double>{};
  if (exact != nullptr)
    for (double e : exact_values)
      if (std::isfinite(e)) max_exact = std::max(max_exact, std::fabs(e));
  std::ostringstream tried;
  for (const Variant& v : variants_of(c)) {
    const std::vector<double> alt = exact_with(g, v);
    if (alt.size() != a.size()) continue;
    // A convention that changes nothing here (a scale of 1 ignored) names nothing: the output
    // that matches it matches the oracle as well.
    if (exact != nullptr && exact_values == alt) continue;
    // The tensor's bound, at the variant's scale (a scale ignored makes the output larger, and the
    // vendor's legitimate error with it).
    double max_alt = 0;
    for (double x : alt)
      if (std::isfinite(x)) max_alt = std::max(max_alt, std::fabs(x));
    const double bound = report.bound * std::max(1.0, max_exact > 0 ? max_alt / max_exact : 1.0);
    double worst = 0;
    bool finite = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!std::isfinite(a[i]) || !std::isfinite(alt[i])) {
        // Non-finite matches only the same non-finite value: +inf is not "close" to 1.5, nor to -inf.
        finite = finite && (std::isnan(a[i]) ? std::isnan(alt[i]) : a[i] == alt[i]);
        continue;
      }
      worst = std::max(worst, std::fabs(a[i] - alt[i]));
    }
    // Named only when it explains the output: within the bound, and at most half as far from it
    // as the golden is (an output that failed by a hair is not "the oracle with k_scale ignored"
    // because that variant, too, lies within reach).
    if (finite && worst <= bound && worst <= 0.5 * report.max_abs_error)
      return Verdict{Pattern::matches_variant, "the output is the oracle's with " + v.name +
                                                   " (max |actual - that| " + sci(worst) + " <= the bound " +
                                                   sci(bound) + ")"};
    tried << (tried.tellp() > 0 ? ", " : "") << v.name << " " << sci(worst);
  }
  if (exact != nullptr)
    if (auto ratio = uniform_ratio_verdict(a, exact_values)) return ratio;
  return std::nullopt;
}

}  // namespace pao::diff

// One tensor against its reference (pao/diff/compare.hpp).
#include "pao/diff/compare.hpp"

#include <cmath>
#include <limits>

namespace pao::diff {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// |a - e|, with the non-finite cases made explicit: a non-finite golden matches only the same
/// value; a non-finite actual where the golden is finite is an infinite error.
double element_error(double a, double e) {
  if (!std::isfinite(e)) return (a == e || (std::isnan(a) && std::isnan(e))) ? 0.0 : kInf;
  if (!std::isfinite(a)) return kInf;
  return std::fabs(a - e);
}

}  // namespace

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(b[i])) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

TensorReport compare_tensor(const CompareInput& in) {
  TensorReport r;
  r.name = in.name;
  r.actual_name = in.actual_name;
  r.reference = in.reference;
  r.policy = in.policy;
  r.golden_dtype = in.golden_dtype;
  r.actual_dtype = in.actual->dtype();
  r.shape = in.golden_shape;
  if (in.actual->shape() != in.golden_shape) {
    r.problem = "shape " + shape_to_string(in.actual->shape()) + " differs from the golden's " +
                shape_to_string(in.golden_shape);
    r.verdict = {Pattern::scattered, "not compared"};
    return r;
  }
  if (!is_floating(in.actual->dtype())) {
    r.problem = "dtype " + std::string(dtype_name(in.actual->dtype())) + " is not a floating-point type";
    r.verdict = {Pattern::scattered, "not compared"};
    return r;
  }
  const CaseGeometry& g = *in.geometry;
  const std::vector<double> a = in.actual->to_f64();
  const std::vector<double>& e = *in.expected;
  const std::int64_t n = static_cast<std::int64_t>(a.size());

  // Pass 1: what the thresholds need (max |exact|, the reference's energy).
  double max_expected = 0, sum_sq_expected = 0, sum_sq_error = 0;
  std::int64_t finite_pairs = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (excluded(g, coords_of(g, in.layout, r.shape, i))) continue;
    const double ei = e[static_cast<std::size_t>(i)], ai = a[static_cast<std::size_t>(i)];
    if (!std::isfinite(ei)) continue;
    max_expected = std::max(max_expected, std::fabs(ei));
    if (std::isfinite(ai)) {
      sum_sq_expected += ei * ei;
      sum_sq_error += (ai - ei) * (ai - ei);
      ++finite_pairs;
    }
  }
  r.nmse = sum_sq_expected > 0 ? sum_sq_error / sum_sq_expected : (sum_sq_error > 0 ? kInf : 0.0);
  const Policy& p = in.policy;
  if (p.rule == Rule::flash) {
    r.kernel_error = in.kernel_error;
    r.floor = p.floor.value_or((2 * unit_roundoff(in.golden_dtype) + 1e-6) * max_expected);
    r.bound = p.k * in.kernel_error + r.floor;
  }
  const double mean_sq = finite_pairs > 0 ? sum_sq_expected / static_cast<double>(finite_pairs) : 0.0;

  // Pass 2: every element.
  Tallies tallies(g, in.layout);
  double worst_abs = -1, worst_rel = -1;
  std::int64_t worst_abs_i = -1, worst_rel_i = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    const Coords c = coords_of(g, in.layout, r.shape, i);
    if (excluded(g, c)) {
      ++r.excluded;
      continue;
    }
    const double ai = a[static_cast<std::size_t>(i)], ei = e[static_cast<std::size_t>(i)];
    const double err = element_error(ai, ei);
    const bool nonfinite = std::isfinite(ei) && !std::isfinite(ai);
    bool mismatch = false;
    if (!std::isfinite(ei) || nonfinite) {
      mismatch = err != 0;
    } else if (p.rule == Rule::flash) {
      mismatch = !(err <= r.bound);
    } else if (p.rule == Rule::elementwise) {
      mismatch = !(err <= p.atol + p.rtol * std::fabs(ei));
    } else {
      mismatch = err * err > p.nmse * mean_sq;  // above the allowed root-mean-square error
    }
    tallies.add(c, mismatch, nonfinite, err);
    r.ulp_histogram.add(std::isfinite(err) ? err / ulp_of(in.golden_dtype, ei) : kInf);
    if (err > worst_abs) worst_abs = err, worst_abs_i = i;
    if (std::isfinite(ei) && ei != 0) {
      const double rel = err / std::fabs(ei);
      if (rel > worst_rel) worst_rel = rel, worst_rel_i = i;
    }
  }
  r.compared = tallies.compared;
  r.mismatched = tallies.mismatched;
  r.nonfinite = tallies.nonfinite;
  r.max_abs_error = std::max(worst_abs, 0.0);
  r.max_rel_error = std::max(worst_rel, 0.0);
  auto element = [&](std::int64_t i, double err) {
    ElementError x;
    x.location = locate(g, in.layout, r.shape, i);
    x.actual = a[static_cast<std::size_t>(i)];
    x.expected = e[static_cast<std::size_t>(i)];
    x.abs_error = err;
    x.rel_error = x.expected != 0 && std::isfinite(x.expected) ? err / std::fabs(x.expected) : 0.0;
    return x;
  };
  if (worst_abs_i >= 0) r.worst_abs = element(worst_abs_i, worst_abs);
  if (worst_rel_i >= 0)
    r.worst_rel = element(worst_rel_i, element_error(a[static_cast<std::size_t>(worst_rel_i)],
                                                     e[static_cast<std::size_t>(worst_rel_i)]));
  r.per_seq = tallies.per_seq;
  r.per_head = tallies.per_head;
  r.per_partition = tallies.per_partition;
  if (p.rule == Rule::nmse) {
    // The rule is on the total; the element flags above only locate the largest errors.
    r.passed = r.nmse <= p.nmse && std::isfinite(r.max_abs_error);  // no NaN/Inf mismatch either
  } else {
    r.passed = r.mismatched == 0;
  }
  r.verdict = r.passed ? Verdict{Pattern::none, "no mismatch"} : classify(g, in.layout, tallies);
  return r;
}

}  // namespace pao::diff

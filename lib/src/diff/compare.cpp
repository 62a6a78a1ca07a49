// One tensor against its reference (pao/diff/compare.hpp). The flash rule's criteria are derived
// in docs/golden.md ("The default rule").
#include "pao/diff/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

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

std::string sci(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

/// Error statistics of one implementation against the reference, over a tensor or a row.
struct ErrorStats {
  double max_abs = 0, sum_sq = 0, sum_ulp = 0;
  void add(double err, double ulps) {
    max_abs = std::max(max_abs, err);
    sum_sq += err * err;
    sum_ulp += ulps;
  }
};

/// What the criteria compare, over a tensor or a row: the reference's size, the actual's errors and
/// the largest of the oracle's own (its kernel precisions, and the exact output rounded once).
struct Moments {
  std::int64_t n = 0;
  double max_expected = 0, sum_sq_expected = 0;
  ErrorStats actual, oracle_max;
  std::vector<ErrorStats> oracle;  // one per kernel reference, then the rounded one

  double nmse(const ErrorStats& s) const { return sum_sq_expected > 0 ? s.sum_sq / sum_sq_expected : 0.0; }
  double mean_ulp(const ErrorStats& s) const { return n > 0 ? s.sum_ulp / static_cast<double>(n) : 0.0; }
  double oracle_nmse() const {
    double m = 0;
    for (const auto& s : oracle) m = std::max(m, nmse(s));
    return m;
  }
  double oracle_mean_ulp() const {
    double m = 0;
    for (const auto& s : oracle) m = std::max(m, mean_ulp(s));
    return m;
  }
};

/// Terms of the longest fp32 sum behind an element of the row: the tokens its softmax and P·V run
/// over (a partition's for the V2 partials) and the head_size products of a logit.
double terms_of_row(const CaseGeometry& g, OutputLayout layout, const Coords& c) {
  double tokens = c.seq >= 0 ? g.seq_lens[static_cast<std::size_t>(c.seq)] : 0;
  if (has_partitions(layout)) tokens = std::min<double>(tokens, g.partition_size);
  return tokens + g.head_size;
}

std::string row_name(OutputLayout layout, const Coords& c) {
  std::string s;
  if (layout == OutputLayout::token_head_dim) {
    s = "token " + std::to_string(c.token) + " (seq " + std::to_string(c.seq) + ")";
  } else {
    s = "seq " + std::to_string(c.seq);
  }
  s += ", head " + std::to_string(c.head);
  if (layout == OutputLayout::seq_head_partition_dim) s += ", partition " + std::to_string(c.partition);
  return s;
}

/// The worst row of a row criterion.
struct RowWorst {
  double use = -1, value = 0, bound = 0;
  std::string where;
  bool failed = false;
  void add(double value_, double bound_, const std::string& where_) {
    const double u = bound_ > 0 ? value_ / bound_ : (value_ > 0 ? kInf : 0.0);
    if (!(value_ <= bound_)) failed = true;
    if (u > use) use = u, value = value_, bound = bound_, where = where_;
  }
  Criterion criterion(const std::string& name) const { return Criterion{name, value, bound, where, !failed}; }
};

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
  const Policy& p = in.policy;
  const double u = unit_roundoff(in.golden_dtype);
  const std::int64_t row_len = r.shape.empty() ? 1 : std::max<std::int64_t>(1, r.shape.back());
  const std::int64_t num_rows = n / row_len;
  std::vector<const std::vector<double>*> oracle = in.kernels;
  if (in.rounded) oracle.push_back(in.rounded);

  // Pass 1, row by row: what the bounds need, and the distributions of the errors.
  Moments total;
  total.oracle.resize(oracle.size());
  struct Row {
    std::int64_t index = 0;
    Moments m;
    double kernel = 0, rms_floor = 0;
    Coords first;
  };
  std::vector<Row> rows;
  double kernel_max = 0, sum_floor_sq = 0;
  for (std::int64_t row = 0; row < num_rows; ++row) {
    Row x;
    x.index = row;
    Moments& m = x.m;
    m.oracle.resize(oracle.size());
    const std::int64_t begin = row * row_len, end = begin + row_len;
    for (std::int64_t i = begin; i < end; ++i) {
      const double ei = e[static_cast<std::size_t>(i)];
      if (!std::isfinite(ei) || excluded(g, coords_of(g, in.layout, r.shape, i))) continue;
      m.max_expected = std::max(m.max_expected, std::fabs(ei));
    }
    for (std::int64_t i = begin; i < end; ++i) {
      const double ei = e[static_cast<std::size_t>(i)], ai = a[static_cast<std::size_t>(i)];
      if (!std::isfinite(ei) || excluded(g, coords_of(g, in.layout, r.shape, i))) continue;
      // Elements far below their row's largest carry errors of the row's scale (the P.V sum's
      // rounding is relative to the largest terms): their ulps are counted at max/16.
      const double ulp = ulp_of(in.golden_dtype, std::max(std::fabs(ei), m.max_expected / 16));
      ++m.n;
      m.sum_sq_expected += ei * ei;
      if (std::isfinite(ai)) m.actual.add(std::fabs(ai - ei), std::fabs(ai - ei) / ulp);
      for (std::size_t k = 0; k < oracle.size(); ++k) {
        const double oi = (*oracle[k])[static_cast<std::size_t>(i)];
        if (!std::isfinite(oi)) continue;
        const double err = std::fabs(oi - ei);
        m.oracle[k].add(err, err / ulp);
        if (k < in.kernels.size()) x.kernel = std::max(x.kernel, err);
      }
    }
    if (m.n == 0) continue;
    kernel_max = std::max(kernel_max, x.kernel);
    total.n += m.n;
    total.max_expected = std::max(total.max_expected, m.max_expected);
    total.sum_sq_expected += m.sum_sq_expected;
    total.actual.max_abs = std::max(total.actual.max_abs, m.actual.max_abs);
    total.actual.sum_sq += m.actual.sum_sq;
    total.actual.sum_ulp += m.actual.sum_ulp;
    for (std::size_t k = 0; k < oracle.size(); ++k) {
      total.oracle[k].sum_sq += m.oracle[k].sum_sq;
      total.oracle[k].sum_ulp += m.oracle[k].sum_ulp;
    }
    x.first = coords_of(g, in.layout, r.shape, begin);
    // The floors of the distributional criteria: what any legitimate order of the row's fp32 sums
    // may add, by the probabilistic bound of Higham & Mary (2019): RMS relative error
    // lambda sqrt(n) 2^-24, lambda = 2; in ulps of the output dtype, sqrt(n) 2^-24 / (2u).
    x.rms_floor = 2 * std::sqrt(terms_of_row(g, in.layout, x.first)) * 0x1p-24;
    sum_floor_sq += x.rms_floor * x.rms_floor * static_cast<double>(m.n);
    rows.push_back(std::move(x));
  }
  r.nmse = total.sum_sq_expected > 0 ? total.actual.sum_sq / total.sum_sq_expected
                                     : (total.actual.sum_sq > 0 ? kInf : 0.0);
  std::vector<double> row_bound(static_cast<std::size_t>(num_rows), kInf);
  RowWorst worst_row, worst_row_nmse, worst_row_ulp;
  if (p.rule == Rule::flash) {
    r.kernel_error = kernel_max;
    // The floor: one ulp of the largest element, vLLM's 1e-6, and what a legitimate order of the
    // longest fp32 sum may add (4 sqrt(n) 2^-24 relative, the max over many elements of the
    // probabilistic bound below).
    double max_rms_floor = 0;
    for (const Row& x : rows) max_rms_floor = std::max(max_rms_floor, x.rms_floor);
    r.floor = p.floor.value_or((2 * u + 1e-6 + 2 * max_rms_floor) * total.max_expected);
    r.bound = p.k * kernel_max + r.floor;
    // Local: each row against its own scale. A row may err, relative to its largest element, as
    // much as the oracle's worst row does (rho): FlashAttention's rule with the row's own floor,
    // so that an error confined to rows of small outputs no longer hides under the tensor's.
    double rho = 0;
    for (const Row& x : rows)
      if (x.m.max_expected > 0) rho = std::max(rho, x.kernel / x.m.max_expected);
    const double tensor_nmse = total.oracle_nmse(), tensor_ulp = total.oracle_mean_ulp();
    // Distributions need vectors: not the one-number-per-partition max_logits and exp_sums. Per
    // row they are compared only for 16-bit outputs, whose rounding dominates the arithmetic; an
    // f32 row's errors come from the order of its fp32 dot products and sums, which legitimate
    // kernels choose differently (a sequential Q.K of a peaked softmax errs several times the
    // oracle's tree), so f32 rows keep the max criteria only.
    const bool vectors = in.layout != OutputLayout::seq_head_partition;
    const bool row_distribution = vectors && u > 0x1p-20;
    for (const Row& x : rows) {
      const std::string where = row_name(in.layout, x.first);
      if (p.local) {
        const double b = p.k * std::max(x.kernel, rho * x.m.max_expected) +
                         (2 * u + 1e-6 + 2 * x.rms_floor) * x.m.max_expected;
        row_bound[static_cast<std::size_t>(x.index)] = b;
        worst_row.add(x.m.actual.max_abs, b, where);
      }
      if (p.distributional && row_distribution) {
        // A row's statistics are noisy (head_size elements) and heavy-tailed across rows (a peaked
        // softmax amplifies logit errors): the oracle's row or tensor value, whichever is larger,
        // times 16x the tensor factor (NMSE) or 4x (mean ulp), plus the floors.
        if (x.m.sum_sq_expected > 0)
          worst_row_nmse.add(x.m.nmse(x.m.actual),
                             16 * p.nmse_factor * std::max(x.m.oracle_nmse(), tensor_nmse) + u * u +
                                 x.rms_floor * x.rms_floor,
                             where);
        worst_row_ulp.add(
            x.m.mean_ulp(x.m.actual),
            4 * p.ulp_factor * std::max(x.m.oracle_mean_ulp(), tensor_ulp) + 1.0 + x.rms_floor / (2 * u),
            where);
      }
    }
  }
  const double mean_sq = total.n > 0 ? total.sum_sq_expected / static_cast<double>(total.n) : 0.0;

  // Pass 2: every element.
  Tallies tallies(g, in.layout);
  double worst_abs = -1, worst_rel = -1;
  std::int64_t worst_abs_i = -1, worst_rel_i = -1;
  std::int64_t global_mismatches = 0;
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
      const bool global = !(err <= r.bound);
      global_mismatches += global;
      mismatch = global || !(err <= row_bound[static_cast<std::size_t>(i / row_len)]);
    } else if (p.rule == Rule::bitwise) {
      // Same dtypes (a dtype mismatch fails before), so equal values with equal signs are equal bits.
      mismatch = !(ai == ei && std::signbit(ai) == std::signbit(ei));
    } else if (p.rule == Rule::elementwise) {
      mismatch = !(err <= p.atol + p.rtol * std::fabs(ei));
    } else {
      mismatch = err * err > p.nmse * mean_sq;  // above the allowed root-mean-square error
    }
    tallies.add(c, mismatch, nonfinite, std::isnan(ai), err);
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
  if (p.rule == Rule::flash) {
    r.criteria.push_back(
        {"global", r.max_abs_error, r.bound, "", global_mismatches == 0 && r.nonfinite == 0});
    if (p.local) r.criteria.push_back(worst_row.criterion("row"));
    if (p.distributional && in.layout != OutputLayout::seq_head_partition) {
      const double floor_sq = total.n > 0 ? sum_floor_sq / static_cast<double>(total.n) : 0.0;
      const double nmse_bound = p.nmse_factor * total.oracle_nmse() + u * u / 4 + floor_sq;
      r.criteria.push_back({"nmse", r.nmse, nmse_bound, "", r.nmse <= nmse_bound});
      const double ulp_bound = p.ulp_factor * total.oracle_mean_ulp() + 0.25 + std::sqrt(floor_sq) / (2 * u);
      const double mean_ulp = total.mean_ulp(total.actual);
      r.criteria.push_back({"mean ulp", mean_ulp, ulp_bound, "", mean_ulp <= ulp_bound});
      if (u > 0x1p-20) {
        r.criteria.push_back(worst_row_nmse.criterion("row nmse"));
        r.criteria.push_back(worst_row_ulp.criterion("row mean ulp"));
      }
    }
    for (const auto& c : r.criteria)
      if (!c.passed) r.failed_criteria.push_back(c.name);
    if (r.nonfinite > 0 && r.failed_criteria.empty()) r.failed_criteria.push_back("nan/inf");
    r.passed = r.failed_criteria.empty() && r.mismatched == 0;
  } else if (p.rule == Rule::nmse) {
    // The rule is on the total; the element flags above only locate the largest errors.
    r.passed = r.nmse <= p.nmse && std::isfinite(r.max_abs_error);  // no NaN/Inf mismatch either
  } else {
    r.passed = r.mismatched == 0;
  }
  if (r.passed) {
    r.verdict = {Pattern::none, "no mismatch"};
  } else if (r.mismatched == 0) {
    // Every element within its bound, the distribution of the errors not: a thin, spread error.
    std::string what;
    for (const auto& c : r.criteria)
      if (!c.passed)
        what += (what.empty() ? "" : "; ") + c.name + " " + sci(c.value) + " > " + sci(c.bound) +
                (c.where.empty() ? "" : " at " + c.where);
    r.verdict = {Pattern::scattered,
                 "spread thinly: every element is within its bound, but the errors' distribution is not "
                 "the oracle's (" +
                     what + ")"};
  } else {
    r.verdict = classify(g, in.layout, tallies);
  }
  return r;
}

}  // namespace pao::diff

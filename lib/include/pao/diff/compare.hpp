// Comparing one actual tensor with its reference under a policy: pass/fail, mismatch count,
// worst absolute and relative errors with their locations, summaries per sequence / head /
// partition, a ULP histogram and the pattern verdict. Every element is visited; nothing stops
// at the first mismatch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/diff/histogram.hpp"
#include "pao/diff/location.hpp"
#include "pao/diff/pattern.hpp"
#include "pao/diff/policy.hpp"

namespace pao::diff {

struct ElementError {
  Location location;
  double actual = 0, expected = 0;
  double abs_error = 0, rel_error = 0;
};

/// One criterion of the flash rule on one tensor: its value against its bound (docs/golden.md,
/// "The default rule"). use = value / bound says how close a passing tensor came.
struct Criterion {
  std::string name;   // "global", "row", "nmse", "row nmse", "mean ulp", "row mean ulp"
  double value = 0;   // the tensor's (or the worst row's) statistic
  double bound = 0;   // what the oracle's kernel precision allows it
  std::string where;  // row criteria: the worst row, "[2, 5] (seq 2, head 5)"
  bool passed = true;
  double use() const { return bound > 0 ? value / bound : (value > 0 ? 1e300 : 0.0); }
};

struct TensorReport {
  std::string name;         // canonical output name ("out", "v2.tmp_out", "reduce(v2 partials)", ...)
  std::string actual_name;  // the tensor's name in ACTUAL
  std::string reference;    // what it was compared with ("out_exact", "v2.tmp_out of the golden")
  bool passed = false;
  std::vector<std::string> failed_criteria;  // "global", "row", "nmse", "mean ulp", ... (docs/golden.md)
  Policy policy;
  std::string problem;  // set when the tensor could not be compared (shape, dtype): it fails
  DType golden_dtype = DType::f32, actual_dtype = DType::f32;
  Shape shape;
  std::int64_t compared = 0, excluded = 0, mismatched = 0, nonfinite = 0;
  double max_abs_error = 0, max_rel_error = 0, nmse = 0;
  // flash rule: the global criterion's terms, and every criterion
  double kernel_error = 0, floor = 0, bound = 0;
  std::vector<Criterion> criteria;
  std::optional<ElementError> worst_abs, worst_rel;
  std::vector<Tally> per_seq, per_head, per_partition;
  UlpHistogram ulp_histogram;
  Verdict verdict;
};

struct CompareInput {
  std::string name, actual_name, reference;
  const CaseGeometry* geometry = nullptr;
  OutputLayout layout = OutputLayout::seq_head_dim;
  const Tensor* actual = nullptr;
  const std::vector<double>* expected = nullptr;  // row-major, the golden's shape
  Shape golden_shape;
  DType golden_dtype = DType::f32;  // the output dtype: ULPs and the flash floor use it
  Policy policy;
  /// flash: the oracle's kernel-precision values of this tensor (one or more: `out` may come
  /// from V1 or V2) and, when there is one, the exact output rounded once (the golden's `out`).
  std::vector<const std::vector<double>*> kernels;
  const std::vector<double>* rounded = nullptr;
};

TensorReport compare_tensor(const CompareInput& in);

/// max |a - b| over elements where both are finite (0 for empty inputs).
double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace pao::diff

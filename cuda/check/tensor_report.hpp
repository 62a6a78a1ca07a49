// Tensor-by-tensor comparison of GPU outputs with the oracle, and its report. Small on purpose:
// when the comparison engine of `pao diff` (issue 4) lands, these functions become calls into it.
#pragma once

#include <cstdint>
#include <string>

#include "pao/core/tensor.hpp"

namespace pao::cuda::check {

struct TensorReport {
  std::string case_id;
  std::string tensor;   // "v2.tmp_out"
  std::string against;  // "kernel" (bit for bit) or "exact" (the derived bound)
  bool passed = true;
  std::int64_t numel = 0;
  std::int64_t mismatches = 0;      // elements whose bits differ (any NaN equals any NaN)
  double max_abs_error = 0;         // over all elements; inf when one side is NaN/inf and the other is not
  std::int64_t worst_index = -1;    // flat index of max_abs_error
  double expected = 0, actual = 0;  // at worst_index
  double bound = 0;                 // "exact" reports: the allowed max |gpu - exact|
  std::string note;                 // shape mismatch, guard bytes...
};

/// 0-ULP comparison: passes when every element has the same bits (NaNs of any payload agree:
/// the GPU's hardware conversions produce canonical NaNs).
TensorReport compare_bitwise(const std::string& case_id, const std::string& tensor, const Tensor& expected,
                             const Tensor& actual);

/// FlashAttention's rule against the exact precision: max |gpu - exact| <= 2 max |kernel - exact|
/// + (4u + 1e-6) max |exact| (docs/numerics.md). `exact` is out_f64.
TensorReport compare_to_exact(const std::string& case_id, const std::string& tensor, const Tensor& exact_f64,
                              const Tensor& kernel, const Tensor& actual);

/// "PASS v2.tmp_out [2, 8, 3, 128] ..." — one line, with the worst element as a multi-index.
std::string format(const TensorReport& r, const Shape& shape);

}  // namespace pao::cuda::check

// Bitwise and bounded comparisons of tensors, and their one-line reports.
#include "check/tensor_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

namespace pao::cuda::check {

namespace {

bool same_bits_or_both_nan(const std::byte* a, const std::byte* b, std::size_t size, double va, double vb) {
  if (std::memcmp(a, b, size) == 0) return true;
  return std::isnan(va) && std::isnan(vb);
}

double abs_error(double expected, double actual) {
  if (std::isnan(expected) && std::isnan(actual)) return 0;
  if (expected == actual) return 0;  // equal infinities too
  const double d = std::fabs(expected - actual);
  return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
}

std::string index_of(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::ostringstream os;
  os << "[";
  for (std::size_t d = 0; d < idx.size(); ++d) os << (d ? ", " : "") << idx[d];
  os << "]";
  return os.str();
}

}  // namespace

TensorReport compare_bitwise(const std::string& case_id, const std::string& tensor, const Tensor& expected,
                             const Tensor& actual) {
  TensorReport r;
  r.case_id = case_id;
  r.tensor = tensor;
  r.against = "kernel";
  r.numel = expected.numel();
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) {
    r.passed = false;
    r.note = "shape or dtype differs: " + std::string(dtype_name(actual.dtype())) + " " +
             shape_to_string(actual.shape()) + " for " + std::string(dtype_name(expected.dtype())) + " " +
             shape_to_string(expected.shape());
    return r;
  }
  const std::vector<double> e = expected.to_f64(), a = actual.to_f64();
  const std::size_t size = dtype_size(expected.dtype());
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (!same_bits_or_both_nan(expected.bytes() + i * size, actual.bytes() + i * size, size, e[i], a[i])) {
      ++r.mismatches;
      const double err = abs_error(e[i], a[i]);
      if (r.worst_index < 0 || err > r.max_abs_error) {
        r.max_abs_error = err;
        r.worst_index = static_cast<std::int64_t>(i);
        r.expected = e[i];
        r.actual = a[i];
      }
    }
  }
  r.passed = r.mismatches == 0;
  return r;
}

TensorReport compare_to_exact(const std::string& case_id, const std::string& tensor, const Tensor& exact_f64,
                              const Tensor& kernel, const Tensor& actual) {
  TensorReport r;
  r.case_id = case_id;
  r.tensor = tensor;
  r.against = "exact";
  r.numel = exact_f64.numel();
  if (exact_f64.shape() != actual.shape() || kernel.shape() != actual.shape()) {
    r.passed = false;
    r.note = "shape differs";
    return r;
  }
  const std::vector<double> x = exact_f64.to_f64(), k = kernel.to_f64(), a = actual.to_f64();
  double kernel_err = 0, max_exact = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    kernel_err = std::max(kernel_err, abs_error(x[i], k[i]));
    if (std::isfinite(x[i])) max_exact = std::max(max_exact, std::fabs(x[i]));
  }
  double u = 0x1p-24;
  if (actual.dtype() == DType::f16) u = 0x1p-11;
  if (actual.dtype() == DType::bf16) u = 0x1p-8;
  r.bound = 2 * kernel_err + (4 * u + 1e-6) * max_exact;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double err = abs_error(x[i], a[i]);
    if (err > r.bound) ++r.mismatches;
    if (r.worst_index < 0 || err > r.max_abs_error) {
      r.max_abs_error = err;
      r.worst_index = static_cast<std::int64_t>(i);
      r.expected = x[i];
      r.actual = a[i];
    }
  }
  r.passed = r.mismatches == 0;
  return r;
}

std::string format(const TensorReport& r, const Shape& shape) {
  std::ostringstream os;
  os.precision(9);
  os << (r.passed ? "PASS " : "FAIL ") << r.case_id << " " << r.tensor << " " << shape_to_string(shape)
     << " vs " << r.against << ": ";
  if (!r.note.empty()) {
    os << r.note;
    return os.str();
  }
  if (r.against == "kernel") {
    os << r.mismatches << " of " << r.numel << " elements differ";
    if (r.mismatches)
      os << "; max |gpu - oracle| " << r.max_abs_error << " at " << index_of(r.worst_index, shape)
         << " (flat " << r.worst_index << "): gpu " << r.actual << ", oracle " << r.expected;
  } else {
    os << "max |gpu - exact| " << r.max_abs_error << " (bound " << r.bound << ")";
    if (r.worst_index >= 0) os << " at " << index_of(r.worst_index, shape);
    if (r.mismatches) os << "; " << r.mismatches << " of " << r.numel << " elements beyond the bound";
  }
  return os.str();
}

}  // namespace pao::cuda::check

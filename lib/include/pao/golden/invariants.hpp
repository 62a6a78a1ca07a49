// The invariants of attention that every golden must satisfy, checked on load so that a golden
// that is wrong — damaged after writing, or written by a broken build — cannot produce a bound:
//   shapes     every output and partial has the shape the case implies; seq_lens are the case's
//   rounding   `out` is `out_exact` rounded once to the output dtype, bit for bit
//   convexity  out_exact of each (row, head) lies, dimension by dimension, inside the range of the
//              dequantised V rows of its sequence (an attention output is a convex combination)
//   kernel     the oracle's kernel-precision outputs lie within an a-priori bound of out_exact:
//              M (4u + 2^-20 + 4 delta), M = max |V| over the row's sequence and KV head, u the
//              output dtype's unit roundoff, delta the fp32 error bound of one logit
//              (docs/golden.md, "Golden integrity", derives it)
//   partials   for every non-empty V2 partition: max_logits finite, exp_sums finite and >= 1
//   codes      an integer cache's codes lie in the range of its dtype (u4 0..15, u8 0..255, i8
//              -128..127), in every slot (the poison of unused slots is qmax)
// A violation names the tensor, the index and the invariant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"

namespace pao::golden {

struct InvariantViolation {
  std::string tensor;     // "out_exact"
  std::string index;      // "[2, 5, 17] (seq 2, head 5, dim 17)"
  std::string invariant;  // "convexity: 3.2e+305 outside the V range [-0.12, 0.11] of sequence 2, kv head 1"
  std::string text() const { return tensor + index + ": " + invariant; }
};

struct InvariantReport {
  std::vector<InvariantViolation> violations;  // the first max_violations
  std::int64_t violation_count = 0;            // all of them
  std::int64_t elements_checked = 0;
  /// max over kernel-precision outputs of |kernel - exact| / bound: how much of the a-priori
  /// bound the oracle's own error uses (tests keep it well below 1).
  double kernel_bound_use = 0;
  std::int32_t kernel_outputs = 0;  // kernel-precision outputs checked (fewer with --outputs)
  /// reshape_and_cache goldens have no kernel-precision outputs: their caches are checked bit for
  /// bit against the write recomputed.
  bool cache_write = false;
  /// The golden leaves out_exact out (`pao golden --outputs`): the outputs it holds were checked
  /// against out_exact recomputed from its inputs.
  bool exact_recomputed = false;
  bool ok() const { return violation_count == 0; }
};

/// Checks every invariant above on a decode or prefix golden; on a reshape_and_cache golden, that
/// key_cache / value_cache are the caches before with the write applied, bit for bit. Throws pao::Error only
/// when the file is not a golden at all (no case) or lacks a tensor the case needs.
InvariantReport check_golden_invariants(const TensorFile& file, std::size_t max_violations = 8);

/// What require_golden_invariants throws: bad input, never a vendor's failure.
class UnsoundGolden : public Error {
 public:
  using Error::Error;
};

/// Throws UnsoundGolden listing the violations (and how to regenerate) unless the golden is sound.
void require_golden_invariants(const TensorFile& file);

}  // namespace pao::golden

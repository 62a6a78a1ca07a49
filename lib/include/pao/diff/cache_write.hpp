// reshape_and_cache's verdict: a vendor's written K or V cache against the golden's, bit for bit
// (fp8 codes exactly), every element of the pool. A mismatch is located by token (its sequence and
// position), slot, block, offset, KV head and dim, and the mismatches as a whole get a pattern a
// vendor recognises (diff/pattern.hpp): scale-ignored, double-rounding, one-ulp, not-written,
// outside-slots, or scattered.
#pragma once

#include <string>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/diff/compare.hpp"
#include "pao/layout/paged_cache_layout.hpp"

namespace pao::diff {

struct CacheWriteInput {
  const cases::Case* golden_case = nullptr;
  CacheTensor which = CacheTensor::key;
  std::string actual_name;
  const Tensor* source = nullptr;        // key or value [rows, num_kv_heads, head_size]
  const Tensor* slot_mapping = nullptr;  // [rows] i64, -1 = padding
  const Tensor* before = nullptr;        // the cache before the write
  const Tensor* expected = nullptr;      // the golden's cache after it
  const Tensor* actual = nullptr;        // the vendor's (an fp8 cache may come as u8 bits)
  /// Where each sequence's slots are (the golden's block_tables, seq_lens): an unmapped slot in the
  /// unused tail of a sequence's last block is named as such. Optional.
  const Tensor* block_tables = nullptr;
  const Tensor* seq_lens = nullptr;
};

/// The report of one cache (name "key_cache" / "value_cache", rule bitwise).
TensorReport compare_cache_write(const CacheWriteInput& in);

/// An integer cache's written scales or zero points (key_cache_scale, ...): the vendor's against
/// the golden's after the write, bit for bit. A vendor whose tensor has another shape or dtype
/// quantised another way than the golden's kv_quant: the report says which (never a silent
/// dequantisation and a comparison of values).
struct QuantParamWriteInput {
  const cases::Case* golden_case = nullptr;
  CacheTensor which = CacheTensor::key;
  bool zero_point = false;
  std::string actual_name;
  const Tensor* slot_mapping = nullptr;  // [rows] i64, -1 = padding
  const Tensor* before = nullptr;        // the params before the write
  const Tensor* expected = nullptr;      // the golden's after it
  const Tensor* actual = nullptr;        // the vendor's
};
TensorReport compare_quant_param_write(const QuantParamWriteInput& in);

}  // namespace pao::diff

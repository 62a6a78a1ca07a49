// The option edits the decode and prefix feature tables share: value distributions and fp8
// caches with scales, applied to each table's own base case.
#pragma once

#include "pao/cases/case.hpp"

namespace pao::test {

/// Calls add(edit) for each shared edit, in this order (a table's seeds follow its order).
template <typename Add>
void add_distribution_and_fp8_cases(Add&& add) {
  add([](cases::Case& s) {
    s.distribution = cases::ValueDistribution::large_logits;
    s.dtype = DType::bf16;
  });
  add([](cases::Case& s) { s.distribution = cases::ValueDistribution::near_ties; });
  add([](cases::Case& s) { s.distribution = cases::ValueDistribution::dominant_token; });
  add([](cases::Case& s) {
    s.distribution = cases::ValueDistribution::all_equal;
    s.dtype = DType::f32;
  });
  add([](cases::Case& s) {
    s.kv_cache_dtype = DType::fp8_e4m3;
    s.k_scale = 0.03125f;
    s.v_scale = 2.0f;
    s.distribution = cases::ValueDistribution::large_logits;
  });
  add([](cases::Case& s) {
    s.kv_cache_dtype = DType::fp8_e5m2;
    s.dtype = DType::bf16;
    s.k_scale = 0.7f;
    s.v_scale = 1.3f;
  });
}

}  // namespace pao::test

// Integer KV caches in the tests' own terms, apart from the library's kv_quant.cpp: the value of a
// code from the param tensors found by their shapes alone ([num_blocks, num_kv_heads, rows, cols]:
// rows 1 is per channel, cols 1 per token, else groups of head_size / cols dims), and the feature
// cases the decode and prefix tables add for them.
#pragma once

#include <cstdint>

#include "pao/cases/case_tensors.hpp"

namespace pao::test {

/// (code - zero_point) * scale of K (key) or V element (block, kv head h, token t in block, dim d).
inline double integer_cache_value(const cases::QuantParamTensors& q, bool key, std::int64_t head_size,
                                  std::int64_t block, std::int64_t h, std::int64_t t, std::int64_t d,
                                  double code) {
  const Tensor& scale = key ? q.key_scale : q.value_scale;
  const Tensor& zero_point = key ? q.key_zero_point : q.value_zero_point;
  const std::int64_t rows = scale.size(2), cols = scale.size(3);
  const std::int64_t r = rows == 1 ? 0 : t;
  const std::int64_t col = d / (head_size / cols);
  return (code - zero_point.at({block, h, r, col})) * scale.at({block, h, r, col});
}

/// Calls add(edit) for each integer-cache edit: u8 with OpenVINO's default (key by channel, value
/// by token), i8 by token / in groups with half-away rounding, f32 over u8 with f16 scales.
template <typename Add>
void add_integer_cache_cases(Add&& add) {
  add([](cases::Case& s) { s.kv_cache_dtype = DType::u8; });
  add([](cases::Case& s) {
    s.kv_cache_dtype = DType::i8;
    s.dtype = DType::bf16;
    s.kv_quant.key = {QuantGranularity::by_token, 0};
    s.kv_quant.value = {QuantGranularity::group, 16};
    s.kv_quant.rounding = QuantRounding::half_away;
    s.alibi = true;
  });
  add([](cases::Case& s) {
    s.kv_cache_dtype = DType::u8;
    s.dtype = DType::f32;
    s.kv_layout = KVLayout::nhd;
    s.kv_quant.key = {QuantGranularity::group, 32};
    s.kv_quant.value = {QuantGranularity::by_channel, 0};
    s.kv_quant.scale_dtype = DType::f16;
    s.distribution = cases::ValueDistribution::large_logits;
  });
  add([](cases::Case& s) {  // OpenVINO's quantiser: fractional zero points, 0 not forced into the range
    s.kv_cache_dtype = DType::u8;
    s.kv_quant.rule = QuantRule::openvino;
    s.kv_layout = KVLayout::hnd;
    s.block_size = 32;
  });
  add([](cases::Case& s) {  // u4: codes 0..15, HND as OpenVINO's cache
    s.kv_cache_dtype = DType::u8;
    s.kv_quant.bits = 4;
    s.kv_layout = KVLayout::hnd;
    s.kv_quant.value = {QuantGranularity::group, 32};
  });
}

}  // namespace pao::test

// reshape_and_cache: new tokens' K/V into the paged caches, through the same layouts the kernels read.
#include "pao/kernels/reshape_and_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "kernels/common/paged_kv.hpp"
#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao {

namespace {

/// Writes one [num_kv_heads, head_size] row of `src` (token `token`) into slot (block, offset).
void write_row(const TensorView& src, std::int64_t token, std::byte* cache, const PagedCacheLayout& layout,
               DType cache_dtype, const std::vector<float>& scales, std::int64_t block, std::int32_t offset) {
  const std::int64_t num_kv_heads = src.shape[1], head_size = src.shape[2];
  const std::size_t src_size = dtype_size(src.dtype), dst_size = dtype_size(cache_dtype);
  for (std::int64_t h = 0; h < num_kv_heads; ++h) {
    const float scale = scales[static_cast<std::size_t>(h)];
    for (std::int64_t d = 0; d < head_size; ++d) {
      const std::byte* s = src.bytes() + src.offset({token, h, d}) * static_cast<std::int64_t>(src_size);
      std::byte* dst = cache + layout.offset(block, h, offset, d) * static_cast<std::int64_t>(dst_size);
      if (!dtype_info(cache_dtype).scaled) {
        std::memcpy(dst, s, src_size);  // same dtype: the bits, NaN payloads included
        continue;
      }
      const float x = static_cast<float>(decode_element(src.dtype, s));  // exact: an activation dtype
      const float q = x / scale;                                         // one fp32 division
      encode_from_f32(cache_dtype, &q, dst, 1);                          // the format's one rounding
    }
  }
}

/// The integer-cache write of one row: each group's scale and zero point from the row's own
/// values (by_token, group_G), then its codes (pao/numerics/kv_quant.hpp).
void write_integer_row(const TensorView& src, std::int64_t token, const TensorView& cache,
                       const PagedCacheLayout& layout, const detail::IntegerDequant& dq, const KVQuant& spec,
                       const TensorView& scale, const TensorView& zero_point, std::int64_t block,
                       std::int32_t offset) {
  const std::int64_t num_kv_heads = src.shape[1];
  const auto head_size = static_cast<std::int32_t>(src.shape[2]);
  const std::int32_t per = dq.layout.dims_per_param;
  std::vector<float> x(static_cast<std::size_t>(head_size));
  std::vector<std::int32_t> codes(x.size());
  std::vector<QuantParams> params(static_cast<std::size_t>(head_size / per));
  const auto es = static_cast<std::int64_t>(dtype_size(dq.code_dtype));
  for (std::int64_t h = 0; h < num_kv_heads; ++h) {
    for (std::int32_t d = 0; d < head_size; ++d)
      x[static_cast<std::size_t>(d)] = static_cast<float>(src.at({token, h, d}));
    quantise_row(x.data(), head_size, per, dq.code_dtype, spec, params.data(), codes.data());
    for (std::int32_t g = 0; g < head_size / per; ++g) {
      const std::int64_t o = dq.layout.offset(block, h, offset, static_cast<std::int64_t>(g) * per);
      encode_element(
          scale.dtype, params[static_cast<std::size_t>(g)].scale,
          const_cast<std::byte*>(scale.bytes()) + o * static_cast<std::int64_t>(dtype_size(scale.dtype)));
      encode_element(zero_point.dtype, params[static_cast<std::size_t>(g)].zero_point,
                     const_cast<std::byte*>(zero_point.bytes()) +
                         o * static_cast<std::int64_t>(dtype_size(zero_point.dtype)));
    }
    for (std::int32_t d = 0; d < head_size; ++d)
      encode_element(dq.code_dtype, codes[static_cast<std::size_t>(d)],
                     const_cast<std::byte*>(cache.bytes()) + layout.offset(block, h, offset, d) * es);
  }
}

/// The by-channel write into one block: the written rows are the block's offsets [first, last];
/// the tokens already at offsets [0, first) are dequantised in f32, (code - zero_point) * scale (the
/// kernels' dequantisation: OpenVINO's), the new rows appended as f32, and the block requantised
/// channel by channel over all of them (its scales, zero points and every code of [0, last]).
void write_integer_block_by_channel(const char* param_name, const TensorView& src,
                                    const std::vector<std::pair<std::int32_t, std::int64_t>>& rows,
                                    const TensorView& cache, const PagedCacheLayout& layout,
                                    const detail::IntegerDequant& dq, const KVQuant& spec,
                                    const TensorView& scale, const TensorView& zero_point,
                                    std::int64_t block) {
  const std::int64_t num_kv_heads = src.shape[1];
  const auto head_size = static_cast<std::int32_t>(src.shape[2]);
  const std::int32_t first = rows.front().first;
  const auto n = static_cast<std::int32_t>(first + rows.size());
  const auto es = static_cast<std::int64_t>(dtype_size(dq.code_dtype));
  std::byte* codes_out = const_cast<std::byte*>(cache.bytes());
  std::vector<float> x(static_cast<std::size_t>(n) * head_size);
  std::vector<std::int32_t> codes(x.size());
  std::vector<QuantParams> params(static_cast<std::size_t>(head_size));
  for (std::int64_t h = 0; h < num_kv_heads; ++h) {
    for (std::int32_t t = 0; t < n; ++t)
      for (std::int32_t d = 0; d < head_size; ++d) {
        float& v = x[static_cast<std::size_t>(t) * head_size + d];
        if (t < first) {
          const std::int64_t p = dq.layout.offset(block, h, t, d);
          const float s = dq.scale[static_cast<std::size_t>(p)],
                      z = dq.zero_point[static_cast<std::size_t>(p)];
          require(std::isfinite(s) && s > 0 && std::isfinite(z), param_name, "[", block, ", ", h, ", 0, ", d,
                  "]: scale ", s, ", zero point ", z, ": block ", block, " holds ", first,
                  " earlier token(s) that the by_channel write requantises; their scale must be finite and "
                  "positive "
                  "and their zero point finite");
          const auto code = static_cast<float>(
              decode_element(dq.code_dtype, codes_out + layout.offset(block, h, t, d) * es));
          v = dequantise_kernel(code, dq.scale[static_cast<std::size_t>(p)],
                                dq.zero_point[static_cast<std::size_t>(p)]);
        } else {
          v = static_cast<float>(src.at({rows[static_cast<std::size_t>(t - first)].second, h, d}));
        }
      }
    quantise_block_by_channel(x.data(), n, head_size, dq.code_dtype, spec, params.data(), codes.data());
    for (std::int32_t d = 0; d < head_size; ++d) {
      const std::int64_t o = dq.layout.offset(block, h, 0, d);
      encode_element(
          scale.dtype, params[static_cast<std::size_t>(d)].scale,
          const_cast<std::byte*>(scale.bytes()) + o * static_cast<std::int64_t>(dtype_size(scale.dtype)));
      encode_element(zero_point.dtype, params[static_cast<std::size_t>(d)].zero_point,
                     const_cast<std::byte*>(zero_point.bytes()) +
                         o * static_cast<std::int64_t>(dtype_size(zero_point.dtype)));
    }
    for (std::int32_t t = 0; t < n; ++t)
      for (std::int32_t d = 0; d < head_size; ++d)
        encode_element(dq.code_dtype, codes[static_cast<std::size_t>(t) * head_size + d],
                       codes_out + layout.offset(block, h, t, d) * es);
  }
}

}  // namespace

void reshape_and_cache(const TensorView& key, const TensorView& value, Tensor& key_cache, Tensor& value_cache,
                       const TensorView& slot_mapping, KVLayout kv_layout, const AttentionOptions& scales) {
  reshape_and_cache_into(key, value, key_cache.view(), value_cache.view(), slot_mapping, kv_layout, scales);
}

void reshape_and_cache_into(const TensorView& key, const TensorView& value, const TensorView& key_cache,
                            const TensorView& value_cache, const TensorView& slot_mapping, KVLayout kv_layout,
                            const AttentionOptions& scales) {
  require(is_activation(key.dtype), "key: dtype ", dtype_name(key.dtype), ", expected ",
          dtype_names(is_activation, " or "));
  detail::check_tensor(key, "key", {-1, -1, -1}, "[num_tokens, num_kv_heads, head_size]");
  require(value.dtype == key.dtype, "value: dtype ", dtype_name(value.dtype), " differs from key's ",
          dtype_name(key.dtype));
  detail::check_tensor(value, "value", {key.shape[0], key.shape[1], key.shape[2]},
                       "[num_tokens, num_kv_heads, head_size] like key");
  const DType cd = key_cache.dtype;
  require(cd == key.dtype || is_cache_format(cd), "key_cache: dtype ", dtype_name(cd), " must equal key's (",
          dtype_name(key.dtype), ") or be a cache format (", dtype_names(is_cache_format), ")");
  const auto num_kv_heads = static_cast<std::int32_t>(key.shape[1]);
  const auto head_size = static_cast<std::int32_t>(key.shape[2]);
  // The caches' shapes, layouts and scales, validated as the kernels validate them (no block table).
  const TensorView no_tables(nullptr, DType::i32, {0, 0});
  const detail::PagedKV kv = detail::make_paged_kv(key_cache, value_cache, kv_layout, no_tables, 0,
                                                   num_kv_heads, head_size, key.dtype, scales);

  require(slot_mapping.dtype == DType::i64 || slot_mapping.dtype == DType::i32, "slot_mapping: dtype ",
          dtype_name(slot_mapping.dtype), ", expected i64 (vLLM) or i32");
  detail::check_tensor(slot_mapping, "slot_mapping", {-1}, "[num_tokens]");
  const std::int64_t n = slot_mapping.shape[0];
  require(n <= key.shape[0], "slot_mapping: ", n, " entries but key has only ", key.shape[0], " tokens");
  const std::int64_t num_slots = static_cast<std::int64_t>(kv.num_blocks) * kv.block_size;
  std::vector<std::pair<std::int64_t, std::int64_t>> slots;  // (slot, token)
  slots.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto s = static_cast<std::int64_t>(slot_mapping.at({i}));
    if (s == -1) continue;
    require(s >= 0 && s < num_slots, "slot_mapping[", i, "] = ", s, ": slot out of range [0, ", num_slots,
            ") = num_blocks ", kv.num_blocks, " x block_size ", kv.block_size, " (-1 marks padding)");
    slots.emplace_back(s, i);
  }
  std::sort(slots.begin(), slots.end());
  for (std::size_t i = 1; i < slots.size(); ++i)
    require(slots[i].first != slots[i - 1].first, "slot_mapping[", slots[i].second, "] = ", slots[i].first,
            ": slot already written by slot_mapping[", slots[i - 1].second, "] (each slot at most once)");

  const KVQuantArgs& quant = scales.kv_quant;
  if (kv.integer) {
    // A by_channel block's written slots follow the tokens it holds: offsets [first, last], all of
    // them (tokens fill a block in order).
    std::map<std::int64_t, std::vector<std::pair<std::int32_t, std::int64_t>>> by_block;  // (offset, token)
    for (const auto& [slot, token] : slots)
      by_block[slot / kv.block_size].emplace_back(static_cast<std::int32_t>(slot % kv.block_size), token);
    const bool any_by_channel = quant.spec.key.granularity == QuantGranularity::by_channel ||
                                quant.spec.value.granularity == QuantGranularity::by_channel;
    if (any_by_channel)
      for (const auto& [block, rows] : by_block)
        for (std::size_t i = 1; i < rows.size(); ++i)
          require(rows[i].first == rows[i - 1].first + 1, "slot_mapping[", rows[i].second,
                  "] = ", block * kv.block_size + rows[i].first, ": block ", block, " is written at offsets ",
                  rows[i - 1].first, " and ", rows[i].first,
                  "; a by_channel cache's block is written in order, without gaps (its "
                  "scales span the block's tokens [0, last])");
    for (const auto& [slot, token] : slots)  // nothing is written unless every row can be
      for (const TensorView* src : {&key, &value})
        for (std::int64_t h = 0; h < num_kv_heads; ++h)
          for (std::int64_t d = 0; d < head_size; ++d)
            require(std::isfinite(src->at({token, h, d})), src == &key ? "key" : "value", "[", token, ", ", h,
                    ", ", d, "] = ", src->at({token, h, d}), ": an integer cache (", dtype_name(cd),
                    ") cannot hold a value that is not finite");
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
      const bool k = t == CacheTensor::key;
      const TensorView& src = k ? key : value;
      const TensorView& cache = k ? key_cache : value_cache;
      const PagedCacheLayout& layout = k ? kv.key_layout : kv.value_layout;
      const detail::IntegerDequant& dq = k ? kv.key_quant : kv.value_quant;
      const TensorView& scale = k ? quant.key_scale : quant.value_scale;
      const TensorView& zero_point = k ? quant.key_zero_point : quant.value_zero_point;
      if (quant.spec.of(t).granularity == QuantGranularity::by_channel) {
        for (const auto& [block, rows] : by_block)
          write_integer_block_by_channel(k ? "key_cache_scale" : "value_cache_scale", src, rows, cache,
                                         layout, dq, quant.spec, scale, zero_point, block);
        continue;
      }
      for (const auto& [slot, token] : slots)
        write_integer_row(src, token, cache, layout, dq, quant.spec, scale, zero_point, slot / kv.block_size,
                          static_cast<std::int32_t>(slot % kv.block_size));
    }
    return;
  }
  for (const auto& [slot, token] : slots) {
    const std::int64_t block = slot / kv.block_size;
    const auto offset = static_cast<std::int32_t>(slot % kv.block_size);
    // The caller's memory, which this call is documented to write.
    write_row(key, token, const_cast<std::byte*>(key_cache.bytes()), kv.key_layout, cd, kv.k_scales, block,
              offset);
    write_row(value, token, const_cast<std::byte*>(value_cache.bytes()), kv.value_layout, cd, kv.v_scales,
              block, offset);
  }
}

}  // namespace pao

// Launch parameters of test cases.
#include "check/case_params.hpp"

#include <cstring>

namespace pao::cuda::check {

namespace {

PagedCacheLayout layout_of(const cases::Case& s, const Tensor& cache, CacheTensor tensor) {
  return contiguous_cache_layout(s.kv_layout, tensor, cache.shape());
}

}  // namespace

void set_attention_params(PagedAttentionParams& p, const AttentionOptions& o, std::int32_t head_size) {
  p.scale = resolved_scale(o, head_size);
  p.alibi_slopes = static_cast<const float*>(o.alibi_slopes.data);
  p.soft_cap = o.soft_cap;
  p.sliding_window = o.sliding_window;
  p.k_scale = o.k_scale;
  p.v_scale = o.v_scale;
  p.k_head_scales = o.k_head_scales.empty() ? nullptr : o.k_head_scales.data();
  p.v_head_scales = o.v_head_scales.empty() ? nullptr : o.v_head_scales.data();
}

std::vector<std::int32_t> case_seq_lens(const Tensor& seq_lens) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(seq_lens.numel()));
  if (!v.empty()) std::memcpy(v.data(), seq_lens.bytes(), v.size() * sizeof(std::int32_t));
  return v;
}

DecodeParams case_decode_params(const cases::DecodeCase& c, const AttentionOptions& o) {
  const cases::Case& s = c.spec;
  DecodeParams p;
  p.dtype = c.query.dtype();
  p.kv_cache_dtype = c.key_cache.dtype();
  p.num_seqs = static_cast<std::int32_t>(c.query.size(0));
  p.num_heads = static_cast<std::int32_t>(c.query.size(1));
  p.head_size = static_cast<std::int32_t>(c.query.size(2));
  p.num_kv_heads = s.num_kv_heads;
  p.block_size = s.block_size;
  const Shape qs = contiguous_strides(c.query.shape());
  p.query = c.query.bytes();
  p.query_seq_stride = qs[0], p.query_head_stride = qs[1], p.query_dim_stride = qs[2];
  p.key_cache = c.key_cache.bytes();
  p.value_cache = c.value_cache.bytes();
  p.key_layout = layout_of(s, c.key_cache, CacheTensor::key);
  p.value_layout = layout_of(s, c.value_cache, CacheTensor::value);
  p.block_tables = c.block_tables.data<std::int32_t>();
  p.block_table_stride = c.block_tables.size(1);
  p.seq_lens = c.seq_lens.data<std::int32_t>();
  set_attention_params(p, o, p.head_size);
  return p;
}

PrefixParams case_prefix_params(const cases::PrefixCase& c, const AttentionOptions& o) {
  const cases::Case& s = c.spec;
  PrefixParams p;
  p.dtype = c.query.dtype();
  p.kv_cache_dtype = c.key_cache.dtype();
  p.num_seqs = s.num_seqs;
  p.num_tokens = static_cast<std::int32_t>(c.query.size(0));
  p.num_heads = static_cast<std::int32_t>(c.query.size(1));
  p.head_size = static_cast<std::int32_t>(c.query.size(2));
  p.num_kv_heads = static_cast<std::int32_t>(c.key.size(1));
  p.block_size = s.block_size;
  const Shape qs = contiguous_strides(c.query.shape()), ks = contiguous_strides(c.key.shape());
  p.query = c.query.bytes();
  p.query_token_stride = qs[0], p.query_head_stride = qs[1], p.query_dim_stride = qs[2];
  p.key = c.key.bytes();
  p.value = c.value.bytes();
  p.key_token_stride = p.value_token_stride = ks[0];
  p.key_head_stride = p.value_head_stride = ks[1];
  p.key_dim_stride = p.value_dim_stride = ks[2];
  p.key_cache = c.key_cache.bytes();
  p.value_cache = c.value_cache.bytes();
  p.key_layout = layout_of(s, c.key_cache, CacheTensor::key);
  p.value_layout = layout_of(s, c.value_cache, CacheTensor::value);
  p.block_tables = c.block_tables.data<std::int32_t>();
  p.block_table_stride = c.block_tables.size(1);
  set_attention_params(p, o, p.head_size);
  return p;
}

}  // namespace pao::cuda::check

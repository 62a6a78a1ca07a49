// Launch parameters of test cases.
#include "check/case_params.hpp"

#include <cstring>

#include "pao/cases/vllm_compat.hpp"

namespace pao::cuda::check {

void set_attention_params(PagedAttentionParams& p, const AttentionOptions& o, std::int32_t head_size) {
  p.scale = resolved_scale(o, head_size);
  p.alibi_slopes = static_cast<const float*>(o.alibi_slopes.data);
  p.soft_cap = o.soft_cap;
  p.sliding_window = o.sliding_window;
  p.k_scale = o.k_scale;
  p.v_scale = o.v_scale;
  p.k_head_scales = o.k_head_scales.empty() ? nullptr : o.k_head_scales.data();
  p.v_head_scales = o.v_head_scales.empty() ? nullptr : o.v_head_scales.data();
  const KVQuantArgs& q = o.kv_quant;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
    QuantTensorParams& out = t == CacheTensor::key ? p.key_quant : p.value_quant;
    out.scale = q.scale(t).data;
    out.zero_point = q.zero_point(t).data;
    out.scale_dtype = q.scale(t).dtype;
    out.zero_point_dtype = q.zero_point(t).dtype;
    out.layout = quant_param_layout(q.spec.of(t), p.num_kv_heads, head_size, p.block_size);
  }
}

std::vector<std::int32_t> case_seq_lens(const Tensor& seq_lens) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(seq_lens.numel()));
  if (!v.empty()) std::memcpy(v.data(), seq_lens.bytes(), v.size() * sizeof(std::int32_t));
  return v;
}

namespace {

/// The shape, dtypes, caches, layouts, block tables and scalars of a case's tensors.
void set_paged_cache(PagedAttentionParams& p, const cases::Case& s, DType cache_dtype, const Shape& key_shape,
                     const Shape& value_shape, const void* key_cache, const void* value_cache,
                     const Tensor& block_tables, const AttentionOptions& o) {
  static_cast<LaunchShape&>(p) = s;
  p.dtype = s.dtype;
  p.kv_cache_dtype = cache_dtype;
  p.key_cache = key_cache;
  p.value_cache = value_cache;
  p.key_layout = contiguous_cache_layout(s.kv_layout, CacheTensor::key, key_shape);
  p.value_layout = contiguous_cache_layout(s.kv_layout, CacheTensor::value, value_shape);
  p.block_tables = block_tables.data<std::int32_t>();
  p.block_table_stride = block_tables.size(1);
  set_attention_params(p, o, p.head_size);
}

void set_paged_cache(PagedAttentionParams& p, const cases::Case& s, const Tensor& key_cache,
                     const Tensor& value_cache, const Tensor& block_tables, const AttentionOptions& o) {
  set_paged_cache(p, s, key_cache.dtype(), key_cache.shape(), value_cache.shape(), key_cache.bytes(),
                  value_cache.bytes(), block_tables, o);
}

void set_query(DecodeParams& p, const Shape& query_shape, const void* query) {
  const Shape qs = contiguous_strides(query_shape);
  p.query = query;
  p.query_seq_stride = qs[0], p.query_head_stride = qs[1], p.query_dim_stride = qs[2];
}

void set_tokens(PrefixParams& p, const cases::Case& s, const Shape& query_shape, const Shape& key_shape) {
  p.num_tokens = static_cast<std::int32_t>(query_shape[0]);
  const Shape qs = contiguous_strides(query_shape), ks = contiguous_strides(key_shape);
  p.query_token_stride = qs[0], p.query_head_stride = qs[1], p.query_dim_stride = qs[2];
  p.key_token_stride = p.value_token_stride = ks[0];
  p.key_head_stride = p.value_head_stride = ks[1];
  p.key_dim_stride = p.value_dim_stride = ks[2];
  p.new_kv_from_cache = cases::kernel_features(s).new_kv_source == NewKVSource::cache;
}

}  // namespace

DecodeParams case_decode_params(const cases::DecodeCase& c, const AttentionOptions& o) {
  DecodeParams p;
  set_paged_cache(p, c.spec, c.key_cache, c.value_cache, c.block_tables, o);
  set_query(p, c.query.shape(), c.query.bytes());
  p.seq_lens = c.seq_lens.data<std::int32_t>();
  return p;
}

PrefixParams case_prefix_params(const cases::PrefixCase& c, const AttentionOptions& o) {
  PrefixParams p;
  set_paged_cache(p, c.spec, c.key_cache, c.value_cache, c.block_tables, o);
  set_tokens(p, c.spec, c.query.shape(), c.key.shape());
  p.query = c.query.bytes();
  p.key = c.key.bytes();
  p.value = c.value.bytes();
  return p;
}

DecodeParams case_decode_params(const bench::FilledDecodeCase& c, const AttentionOptions& o) {
  DecodeParams p;
  set_paged_cache(p, c.spec, c.key_cache.dtype, c.key_cache.shape, c.value_cache.shape, nullptr, nullptr,
                  c.block_tables, o);
  set_query(p, c.query.shape, nullptr);
  p.seq_lens = c.seq_lens.data<std::int32_t>();
  return p;
}

PrefixParams case_prefix_params(const bench::FilledPrefixCase& c, const AttentionOptions& o) {
  PrefixParams p;
  set_paged_cache(p, c.spec, c.key_cache.dtype, c.key_cache.shape, c.value_cache.shape, nullptr, nullptr,
                  c.block_tables, o);
  set_tokens(p, c.spec, c.query.shape, c.key.shape);
  return p;
}

bool has_cuda_kernel(KernelVariant variant) {
  return variant == KernelVariant::v1 || variant == KernelVariant::v2 || variant == KernelVariant::prefix;
}

}  // namespace pao::cuda::check

// Validation of paged KV caches, block tables and attention scalars.
#include "kernels/common/paged_kv.hpp"

#include <cmath>

#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao::detail {

void check_tensor(const TensorView& t, const char* name, std::initializer_list<std::int64_t> shape,
                  const char* shape_doc) {
  check_tensor(t, name, std::span<const std::int64_t>(shape.begin(), shape.size()), shape_doc);
}

void check_tensor(const TensorView& t, const char* name, std::span<const std::int64_t> shape,
                  const char* shape_doc) {
  require(t.data != nullptr || t.numel() == 0, name, ": missing (expected ", shape_doc, ")");
  require(t.rank() == static_cast<int>(shape.size()), name, ": rank ", t.rank(), " with shape ",
          shape_to_string(t.shape), ", expected ", shape_doc);
  int d = 0;
  for (auto want : shape) {
    require(want < 0 || t.shape[static_cast<std::size_t>(d)] == want, name, ": shape ",
            shape_to_string(t.shape), " does not match ", shape_doc, " (dim ", d, " should be ", want, ")");
    ++d;
  }
}

std::vector<std::int32_t> read_i32_vector(const TensorView& t, const char* name, std::int64_t expected) {
  require(t.dtype == DType::i32, name, ": dtype ", dtype_name(t.dtype), ", expected i32");
  check_tensor(t, name, {expected}, "[num_seqs]");
  std::vector<std::int32_t> v(static_cast<std::size_t>(expected));
  for (std::int64_t i = 0; i < expected; ++i) v[static_cast<std::size_t>(i)] = t.i32_at({i});
  return v;
}

std::int32_t AttentionProblem::take_query(const TensorView& q, const char* shape_doc) {
  require(is_activation(q.dtype), "query: dtype ", dtype_name(q.dtype), ", expected ",
          dtype_names(is_activation, " or "));
  check_tensor(q, "query", {-1, -1, -1}, shape_doc);
  num_heads = static_cast<std::int32_t>(q.shape[1]);
  head_size = static_cast<std::int32_t>(q.shape[2]);
  require(num_heads > 0 && head_size > 0, "query: shape ", shape_to_string(q.shape),
          " has no heads or an empty head_size");
  dtype = q.dtype;
  query = q;
  return static_cast<std::int32_t>(q.shape[0]);
}

namespace {

/// The scales and zero points of `tensor` of an integer cache, checked against the kv_quant spec.
IntegerDequant integer_dequant(const KVQuantArgs& q, CacheTensor tensor, const PagedKV& kv,
                               DType code_dtype) {
  const TensorQuant& tq = q.spec.of(tensor);
  const char* side = tensor == CacheTensor::key ? "key" : "value";
  if (const auto rule = tensor_quant_rule(tq, kv.head_size)) fail("kv_quant.", side, ": ", *rule);
  const Shape want = quant_param_shape(tq, kv.num_blocks, kv.num_kv_heads, kv.head_size, kv.block_size);
  IntegerDequant d;
  d.code_dtype = code_dtype;
  d.bits = q.spec.bits;
  d.rule = q.spec.rule;
  code_range(code_dtype, d.bits);  // refuses bits other than 8, and 4 of u8
  d.layout = quant_param_layout(tq, kv.num_kv_heads, kv.head_size, kv.block_size);
  for (const bool zp : {false, true}) {
    const TensorView& t = zp ? q.zero_point(tensor) : q.scale(tensor);
    const std::string name(quant_param_name(tensor, zp));
    require(t.data != nullptr || t.numel() == 0, name, ": missing (a ", dtype_name(code_dtype),
            " cache needs ", shape_to_string(want), " for ", side, " ", to_string(tq), ")",
            code_dtype == DType::u8 ? "; fp8 codes in a uint8 tensor (vLLM's fp8 caches) must be declared "
                                      "fp8_e4m3 or fp8_e5m2"
                                    : "");
    const DType want_dtype = zp ? q.spec.zero_point_dtype : q.spec.scale_dtype;
    require(t.dtype == want_dtype, name, ": dtype ", dtype_name(t.dtype), ", expected ",
            dtype_name(want_dtype), " (kv_quant's ", zp ? "zero_point_dtype" : "scale_dtype", ")");
    require(t.is_contiguous(), name, ": strides ", shape_to_string(t.strides),
            " are not contiguous (scales and zero points are read and written in the row-major order of ",
            shape_to_string(want), ")");
    require(t.shape == want, name, ": shape ", shape_to_string(t.shape), " does not match ",
            shape_to_string(want), " = [num_blocks, num_kv_heads, ",
            tq.granularity == QuantGranularity::by_channel ? "1" : "block_size", ", ",
            tq.granularity == QuantGranularity::by_token     ? "1"
            : tq.granularity == QuantGranularity::by_channel ? "head_size"
                                                             : "head_size / group_size",
            "] (", side, " ", to_string(tq), ")");
    std::vector<float>& out = zp ? d.zero_point : d.scale;
    out.resize(static_cast<std::size_t>(t.numel()));
    const Tensor dense = Tensor::copy_of(t);
    decode_to_f32(t.dtype, dense.bytes(), out.data(), out.size());
  }
  return d;
}

/// The rule of one used scale / zero point; `where` names its element.
void check_quant_param(const IntegerDequant& d, CacheTensor tensor, std::int64_t offset, std::int32_t seq,
                       std::int32_t pos) {
  const float s = d.scale[static_cast<std::size_t>(offset)];
  const float z = d.zero_point[static_cast<std::size_t>(offset)];
  const CodeRange r = code_range(d.code_dtype, d.bits);
  auto where = [&](bool zp) {
    return std::string(quant_param_name(tensor, zp)) + " element " + std::to_string(offset) + " (sequence " +
           std::to_string(seq) + ", position " + std::to_string(pos) + ")";
  };
  require(std::isfinite(s) && s > 0.0f, where(false), " = ", s, ": a scale must be finite and positive");
  if (d.rule == QuantRule::openvino) {  // -min / scale: any finite value
    require(std::isfinite(z), where(true), " = ", z, ": a zero point must be finite");
    return;
  }
  require(z == std::nearbyint(z) && z >= r.lo && z <= r.hi, where(true), " = ", z,
          ": a zero point must be an integer in ", d.bits == 4 ? "u4" : dtype_name(d.code_dtype),
          "'s range [", r.lo, ", ", r.hi, "]");
}

}  // namespace

PagedKV make_paged_kv(const TensorView& key_cache, const TensorView& value_cache, KVLayout layout,
                      const TensorView& block_tables, std::int32_t num_seqs, std::int32_t num_kv_heads_hint,
                      std::int32_t head_size, DType activation_dtype, const AttentionOptions& options) {
  PagedKV kv;
  const DType cd = key_cache.dtype;
  require(value_cache.dtype == cd, "value_cache: dtype ", dtype_name(value_cache.dtype),
          " differs from key_cache's ", dtype_name(cd));
  require(cd == activation_dtype || is_cache_format(cd), "key_cache: dtype ", dtype_name(cd),
          " must equal the query's (", dtype_name(activation_dtype), ") or be a cache format (",
          dtype_names(is_cache_format), ")");
  kv.cache_dtype = cd;
  const int key_rank = layout == KVLayout::vllm ? 5 : 4;
  require(key_cache.rank() == key_rank, "key_cache: rank ", key_cache.rank(), " with shape ",
          shape_to_string(key_cache.shape), ", expected ", cache_shape_doc(layout, CacheTensor::key),
          " (kv_layout ", kv_layout_name(layout), ")");
  const CacheDims dims = cache_dims(layout, CacheTensor::key, key_cache.shape);
  kv.num_blocks = static_cast<std::int32_t>(dims.num_blocks);
  kv.num_kv_heads = static_cast<std::int32_t>(dims.num_kv_heads);
  kv.block_size = static_cast<std::int32_t>(dims.block_size);
  for (const CacheTensor tensor : {CacheTensor::key, CacheTensor::value}) {
    const bool key = tensor == CacheTensor::key;
    check_tensor(key ? key_cache : value_cache, key ? "key_cache" : "value_cache",
                 cache_shape(layout, tensor, kv.num_blocks, kv.num_kv_heads, head_size, kv.block_size, cd),
                 cache_shape_doc(layout, tensor));
  }
  require(num_kv_heads_hint <= 0 || kv.num_kv_heads == num_kv_heads_hint, "key_cache: ", kv.num_kv_heads,
          " kv heads, expected ", num_kv_heads_hint);
  require(kv.block_size > 0, "key_cache: block_size must be positive");
  kv.head_size = head_size;
  kv.key_data = key_cache.bytes();
  kv.value_data = value_cache.bytes();
  kv.key_layout = cache_layout(layout, CacheTensor::key, key_cache.shape, key_cache.strides);
  kv.value_layout = cache_layout(layout, CacheTensor::value, value_cache.shape, value_cache.strides);

  require(block_tables.dtype == DType::i32, "block_tables: dtype ", dtype_name(block_tables.dtype),
          ", expected i32");
  check_tensor(block_tables, "block_tables", {num_seqs, -1}, "[num_seqs, max_num_blocks_per_seq]");
  kv.max_blocks_per_seq = static_cast<std::int32_t>(block_tables.shape[1]);
  kv.block_tables.resize(static_cast<std::size_t>(num_seqs) * kv.max_blocks_per_seq);
  for (std::int32_t s = 0; s < num_seqs; ++s)
    for (std::int32_t b = 0; b < kv.max_blocks_per_seq; ++b)
      kv.block_tables[static_cast<std::size_t>(s) * kv.max_blocks_per_seq + b] = block_tables.i32_at({s, b});

  auto per_head = [&](const std::vector<float>& heads, float tensor_scale, const char* name) {
    if (!is_fp8(cd)) return std::vector<float>(static_cast<std::size_t>(kv.num_kv_heads), 1.0f);
    if (heads.empty()) {
      check_fp8_scale(tensor_scale, name);
      return std::vector<float>(static_cast<std::size_t>(kv.num_kv_heads), tensor_scale);
    }
    require(heads.size() == static_cast<std::size_t>(kv.num_kv_heads), name, "_per_head: ", heads.size(),
            " entries, expected num_kv_heads = ", kv.num_kv_heads);
    for (std::size_t h = 0; h < heads.size(); ++h)
      check_fp8_scale(heads[h], std::string(name) + "_per_head[" + std::to_string(h) + "]");
    return heads;
  };
  kv.k_scales = per_head(options.k_head_scales, options.k_scale, "k_scale");
  kv.v_scales = per_head(options.v_head_scales, options.v_scale, "v_scale");
  if (is_integer_cache(cd)) {
    kv.integer = true;
    kv.key_quant = integer_dequant(options.kv_quant, CacheTensor::key, kv, cd);
    kv.value_quant = integer_dequant(options.kv_quant, CacheTensor::value, kv, cd);
  }
  return kv;
}

void PagedKV::check_sequence(std::int32_t seq, std::int32_t seq_len) const {
  const std::int64_t capacity = static_cast<std::int64_t>(max_blocks_per_seq) * block_size;
  require(seq_len <= capacity, "seq_lens[", seq, "] = ", seq_len, " exceeds the block table's capacity of ",
          max_blocks_per_seq, " blocks x ", block_size, " tokens = ", capacity);
  const std::int32_t used = blocks_for_tokens(seq_len, block_size);
  const std::int32_t* row = block_table(seq);
  for (std::int32_t b = 0; b < used; ++b)
    require(row[b] >= 0 && row[b] < num_blocks, "block_tables[", seq, "][", b, "] = ", row[b],
            ": block id out of range [0, ", num_blocks, ") of key_cache");
  check_quant_params(seq, seq_len);
}

void PagedKV::check_quant_params(std::int32_t seq, std::int32_t num_tokens) const {
  if (!integer) return;
  const std::int32_t* row = block_table(seq);
  for (const CacheTensor tensor : {CacheTensor::key, CacheTensor::value}) {
    const IntegerDequant& d = *integer_dequant(tensor);
    for (std::int32_t pos = 0; pos < num_tokens; ++pos)
      for (std::int32_t h = 0; h < num_kv_heads; ++h)
        for (std::int32_t dim = 0; dim < head_size; dim += d.layout.dims_per_param)
          check_quant_param(d, tensor, d.layout.offset(row[pos / block_size], h, pos % block_size, dim), seq,
                            pos);
  }
}

AttentionScalars make_scalars(const AttentionOptions& options, std::int32_t num_heads,
                              std::int32_t head_size) {
  AttentionScalars s;
  s.scale = resolved_scale(options, head_size);
  check_attention_scalars(s.scale, options.soft_cap, options.sliding_window);
  s.soft_cap = options.soft_cap;
  s.sliding_window = options.sliding_window;
  const TensorView& a = options.alibi_slopes;
  if (a.data != nullptr) {
    require(a.dtype == DType::f32, "alibi_slopes: dtype ", dtype_name(a.dtype), ", expected f32");
    check_tensor(a, "alibi_slopes", {num_heads}, "[num_heads]");
    s.alibi_slopes.resize(static_cast<std::size_t>(num_heads));
    for (std::int32_t h = 0; h < num_heads; ++h) {
      s.alibi_slopes[static_cast<std::size_t>(h)] = static_cast<float>(a.at({h}));
      require(std::isfinite(s.alibi_slopes[static_cast<std::size_t>(h)]), "alibi_slopes[", h,
              "] is not finite");
    }
  }
  return s;
}

LogitParams logit_params(const AttentionScalars& s, std::int32_t head) {
  LogitParams p;
  p.scale = s.scale;
  p.soft_cap = s.soft_cap;
  p.alibi = !s.alibi_slopes.empty();
  p.alibi_slope = p.alibi ? s.alibi_slopes[static_cast<std::size_t>(head)] : 0.0f;
  p.sliding_window = s.sliding_window;
  return p;
}

}  // namespace pao::detail

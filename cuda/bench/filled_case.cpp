// Benchmark cases filled on the device (bench/filled_case.hpp).
#include "bench/filled_case.hpp"

#include <algorithm>
#include <cstring>

#include "cases/case_block_tables.hpp"  // libpao's block tables (lib/src): make_decode_case's own
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/core/random.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cuda::bench {

namespace {

constexpr double kConstant = 0.0625;  // ValueDraw's constant: exact in every dtype, fp8 included

FilledTensor filled(DType dtype, Shape shape, double value) {
  FilledTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  encode_element(dtype, value, &t.pattern);  // little-endian: the low bytes hold the element
  return t;
}

Tensor i32_tensor(const std::vector<std::int32_t>& v) {
  Tensor t(DType::i32, {static_cast<std::int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<std::int32_t>());
  return t;
}

Tensor alibi_tensor(const cases::Case& c) {
  if (!c.alibi) return {};
  const auto slopes = cases::alibi_slopes_for(c.num_heads);
  Tensor t(DType::f32, {c.num_heads});
  std::copy(slopes.begin(), slopes.end(), t.data<float>());
  return t;
}

/// make_pool's block tables: the first draws of the case's stream.
Tensor block_tables_of(const cases::Case& c) {
  std::vector<std::int32_t> used;
  std::int32_t widest = 0;
  for (auto len : c.seq_lens) {
    used.push_back(blocks_for_tokens(len, c.block_size));
    widest = std::max(widest, used.back());
  }
  const std::int32_t columns = std::max(widest + c.extra_table_columns, 1);
  Tensor t(DType::i32, {c.num_seqs, columns});
  Rng rng(c.seed);
  detail::fill_block_tables(t.data<std::int32_t>(), columns, used, cases::pool_num_blocks(c), rng);
  return t;
}

/// Both caches: the constant / the tensor's scale (fp8 caches store value / scale).
void fill_caches(const cases::Case& c, FilledTensor& key_cache, FilledTensor& value_cache) {
  const DType cd = c.cache_storage_dtype();
  const std::int32_t blocks = cases::pool_num_blocks(c);
  const auto shape = [&](CacheTensor t) {
    return cache_shape(c.kv_layout, t, blocks, c.num_kv_heads, c.head_size, c.block_size, cd);
  };
  key_cache = filled(cd, shape(CacheTensor::key), kConstant / c.kv_scale(CacheTensor::key, 0));
  value_cache = filled(cd, shape(CacheTensor::value), kConstant / c.kv_scale(CacheTensor::value, 0));
}

void require_fillable(const cases::Case& c) {
  require(fills_on_device(c), "case ", c.id,
          ": not filled on the device (only the constant distribution over a float or fp8 cache with one "
          "scale for every KV head)");
  require(c.num_seqs == static_cast<std::int32_t>(c.seq_lens.size()), "case ", c.id, ": seq_lens has ",
          c.seq_lens.size(), " entries but num_seqs = ", c.num_seqs);
}

}  // namespace

std::size_t FilledTensor::nbytes() const {
  return static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
}

AttentionOptions FilledDecodeCase::options() const { return cases::attention_options(spec, alibi_slopes); }
AttentionOptions FilledPrefixCase::options() const { return cases::attention_options(spec, alibi_slopes); }

bool fills_on_device(const cases::Case& c) {
  if (c.distribution != cases::ValueDistribution::constant || c.integer_cache()) return false;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
    for (std::int32_t h = 1; h < c.num_kv_heads; ++h)
      if (c.kv_scale(t, h) != c.kv_scale(t, 0)) return false;
  return true;
}

namespace {

/// What a filled decode and prefix case share: the case, a query of one row per new token, the
/// caches, block tables, seq_lens and ALiBi slopes.
template <typename Filled>
Filled filled_attention_case(const cases::Case& c, cases::CaseKernel kernel) {
  require_fillable(c);
  require(c.kernel == kernel, "case ", c.id, ": not a ", cases::to_string(kernel), " case");
  Filled f;
  f.spec = c;
  f.query = filled(c.dtype, {c.num_tokens(), c.num_heads, c.head_size}, kConstant);
  fill_caches(c, f.key_cache, f.value_cache);
  f.block_tables = block_tables_of(c);
  f.seq_lens = i32_tensor(c.seq_lens);
  f.alibi_slopes = alibi_tensor(c);
  return f;
}

}  // namespace

FilledDecodeCase make_filled_decode_case(const cases::Case& c) {
  return filled_attention_case<FilledDecodeCase>(c, cases::CaseKernel::decode);
}

FilledPrefixCase make_filled_prefix_case(const cases::Case& c) {
  FilledPrefixCase f = filled_attention_case<FilledPrefixCase>(c, cases::CaseKernel::prefix);
  f.key = filled(c.dtype, {c.num_tokens(), c.num_kv_heads, c.head_size}, kConstant);
  f.value = f.key;
  return f;
}

Tensor materialize(const FilledTensor& t) {
  Tensor out(t.dtype, t.shape);
  const std::size_t es = dtype_size(t.dtype);
  for (std::size_t i = 0; i < out.nbytes(); i += es) std::memcpy(out.bytes() + i, &t.pattern, es);
  return out;
}

}  // namespace pao::cuda::bench

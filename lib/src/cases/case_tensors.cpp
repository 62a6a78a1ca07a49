// A case's tensors from its seed (pao/cases/case_tensors.hpp). Decode and prefix share the paged
// pool (caches full of poison, block tables) and the value draws; the random stream of each
// kind is fixed: block tables, the query, then per sequence (and KV head) its K/V rows.
#include "pao/cases/case_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cases/case_block_tables.hpp"
#include "cases/integer_cache.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/core/random.hpp"
#include "pao/kernels/reshape_and_cache.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cases {

namespace {

void check_case(const Case& c, CaseKernel kernel) {
  require(c.kernel == kernel, "case ", c.id, ": a ", to_string(c.kernel), " case, expected ",
          to_string(kernel));
  const bool new_tokens = kinds::kind_of(c).traits().new_tokens;
  require(c.num_seqs == static_cast<std::int32_t>(c.seq_lens.size()), "case: seq_lens has ",
          c.seq_lens.size(), " entries but num_seqs = ", c.num_seqs);
  require(!new_tokens || c.query_lens.size() == c.seq_lens.size(), "case: query_lens has ",
          c.query_lens.size(), " entries but seq_lens has ", c.seq_lens.size());
  require(c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads == 0, "case: num_heads = ", c.num_heads,
          " is not a multiple of num_kv_heads = ", c.num_kv_heads);
  require(c.block_size > 0 && c.head_size > 0, "case: block_size and head_size must be positive");
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
    require(c.seq_lens[s] >= 0, "case: negative seq_len ", c.seq_lens[s]);
    require(!new_tokens || (c.query_lens[s] >= 0 && c.query_lens[s] <= c.seq_lens[s]), "case: sequence ", s,
            " has query_len ", new_tokens ? c.query_lens[s] : 0, " outside [0, seq_len = ", c.seq_lens[s],
            "]");
  }
}

/// The paged pool of a case: both caches (every slot poisoned until written), the block tables.
struct PagedPool {
  Tensor key_cache, value_cache, block_tables;
  PagedCacheLayout key_layout, value_layout;
  QuantParamTensors quant;  // integer caches
  std::int32_t columns = 0;

  /// Slot (physical block * block_size + offset) of token `pos` of sequence s.
  std::int64_t slot_of(std::int32_t s, std::int32_t pos, std::int32_t block_size) const {
    const std::int32_t* table = block_tables.data<std::int32_t>();
    return static_cast<std::int64_t>(table[static_cast<std::size_t>(s) * columns + pos / block_size]) *
               block_size +
           pos % block_size;
  }
};

PagedPool make_pool(const Case& c, Rng& rng) {
  const std::int32_t bs = c.block_size;
  std::int64_t needed = 0;
  std::int32_t widest = 0;
  std::vector<std::int32_t> used_blocks;
  for (auto len : c.seq_lens) {
    used_blocks.push_back(blocks_for_tokens(len, bs));
    needed += used_blocks.back();
    widest = std::max(widest, used_blocks.back());
  }
  require(
      static_cast<std::int64_t>(widest) + c.extra_table_columns <= std::numeric_limits<std::int32_t>::max(),
      "case ", c.id, ": extra_table_columns = ", c.extra_table_columns, " makes the block table wider than ",
      "int32 (", widest, " used columns)");
  const std::int32_t num_blocks = pool_num_blocks(c);
  require(num_blocks >= needed, "case: num_blocks = ", num_blocks, " but the sequences need ", needed);

  PagedPool pool;
  const DType cd = c.cache_storage_dtype();
  const double poison = c.integer_cache() ? detail::integer_cache_poison_code(c)
                        : c.poison_unused ? std::numeric_limits<double>::quiet_NaN()
                                          : 0.0;
  if (c.integer_cache()) pool.quant = detail::make_quant_params(c, num_blocks);
  for (const CacheTensor tensor : {CacheTensor::key, CacheTensor::value}) {
    const Shape shape = cache_shape(c.kv_layout, tensor, num_blocks, c.num_kv_heads, c.head_size, bs, cd);
    (tensor == CacheTensor::key ? pool.key_cache : pool.value_cache) = Tensor::filled(cd, shape, poison);
    (tensor == CacheTensor::key ? pool.key_layout : pool.value_layout) =
        contiguous_cache_layout(c.kv_layout, tensor, shape);
  }
  // Non-contiguous, garbage past each sequence's last block (case_block_tables.hpp).
  pool.columns = std::max(widest + c.extra_table_columns, 1);
  pool.block_tables = Tensor(DType::i32, {c.num_seqs, pool.columns});
  detail::fill_block_tables(pool.block_tables.data<std::int32_t>(), pool.columns, used_blocks, num_blocks,
                            rng);
  return pool;
}

/// The values of query, K and V under the case's distribution.
class ValueDraw {
 public:
  ValueDraw(const Case& c, Rng& rng) : d_(c.distribution), rng_(rng) {
    r_ = 1.0 / std::sqrt(static_cast<double>(c.head_size));
    big_ = d_ == ValueDistribution::large_logits || d_ == ValueDistribution::dominant_token;
    qk_range_ = big_ ? (d_ == ValueDistribution::large_logits ? 4.0 : 1.0) : r_;
  }
  double operator()(double range) {
    if (d_ == ValueDistribution::small_integers) return static_cast<double>(rng_.between(-4, 4)) * 0.125;
    if (d_ == ValueDistribution::constant) return 0.0625;  // exact in every dtype, fp8 included
    return rng_.uniform(-range, range);
  }
  double qk() { return (*this)(qk_range_); }
  double v() { return (*this)(big_ ? 1.0 : r_); }
  /// A K element: under near_ties / all_equal, the KV head's shared row; the dominant token's is
  /// +-4 with the sign of `query_sign_of` (its query's element); else a fresh draw.
  template <typename QuerySign>
  double k(const std::vector<double>& shared_row, std::int32_t d, bool dominant, QuerySign query_sign_of) {
    double k = qk();
    switch (d_) {
      case ValueDistribution::near_ties:
        k = shared_row[static_cast<std::size_t>(d)] * (1.0 + 1e-3 * rng_.uniform(-1, 1));
        break;
      case ValueDistribution::all_equal:
        k = shared_row[static_cast<std::size_t>(d)];
        break;
      case ValueDistribution::dominant_token:
        if (dominant) k = 4.0 * (query_sign_of(d) >= 0 ? 1.0 : -1.0);
        break;
      default:
        break;
    }
    return k;
  }
  /// The token of a sequence of `len` tokens that dominant_token aligns with its query.
  std::int32_t dominant(std::int32_t len) {
    return len > 0 ? static_cast<std::int32_t>(rng_.below(static_cast<std::uint64_t>(len))) : 0;
  }

 private:
  ValueDistribution d_;
  Rng& rng_;
  double r_ = 0, qk_range_ = 0;
  bool big_ = false;
};

Tensor from_f64(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  encode_from_f64(dtype, values.data(), t.bytes(), values.size());
  return t;
}

Tensor alibi_tensor(const Case& c) {
  if (!c.alibi) return {};
  const auto slopes = alibi_slopes_for(c.num_heads);
  Tensor t(DType::f32, {c.num_heads});
  std::copy(slopes.begin(), slopes.end(), t.data<float>());
  return t;
}

Tensor i32_tensor(const std::vector<std::int32_t>& v) {
  Tensor t(DType::i32, {static_cast<std::int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<std::int32_t>());
  return t;
}

/// `c` (a DecodeCase or PrefixCase) holding the pool's caches and block table, and its ALiBi slopes.
template <typename AttentionCase>
AttentionCase with_pool(AttentionCase c, PagedPool& pool) {
  c.key_cache = std::move(pool.key_cache);
  c.value_cache = std::move(pool.value_cache);
  c.block_tables = std::move(pool.block_tables);
  c.quant = std::move(pool.quant);
  c.alibi_slopes = alibi_tensor(c.spec);
  return c;
}

/// A prefix step's integer cache: each sequence's context (and, with cache_new_tokens, its new
/// tokens) block by block, each block quantised whole (a by_channel block's scales span its tokens).
void write_integer_prefix_cache(const Case& spec, PagedPool& pool, const Tensor& ctx_key,
                                const Tensor& ctx_value, const Tensor& new_key, const Tensor& new_value,
                                const std::vector<std::int32_t>& start) {
  const std::int32_t bs = spec.block_size, hs = spec.head_size;
  std::vector<float> k_rows, v_rows;
  std::int32_t ctx_base = 0;
  for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const std::int32_t ctx = spec.context_len(si);
    const std::int32_t written = spec.cache_new_tokens ? spec.seq_lens[si] : ctx;
    k_rows.resize(static_cast<std::size_t>(written) * hs);
    v_rows.resize(k_rows.size());
    for (std::int32_t h = 0; h < spec.num_kv_heads; ++h) {
      for (std::int32_t pos = 0; pos < written; ++pos) {
        const bool in_ctx = pos < ctx;
        const std::int64_t row = in_ctx ? ctx_base + pos : start[si] + pos - ctx;
        const Tensor& k = in_ctx ? ctx_key : new_key;
        const Tensor& v = in_ctx ? ctx_value : new_value;
        for (std::int32_t d = 0; d < hs; ++d) {
          k_rows[static_cast<std::size_t>(pos) * hs + d] = static_cast<float>(k.at({row, h, d}));
          v_rows[static_cast<std::size_t>(pos) * hs + d] = static_cast<float>(v.at({row, h, d}));
        }
      }
      for (std::int32_t t0 = 0; t0 < written; t0 += bs) {
        const std::int64_t b = pool.slot_of(s, t0, bs) / bs;
        const std::int32_t n = std::min(bs, written - t0);
        const std::size_t row = static_cast<std::size_t>(t0) * hs;
        detail::write_integer_block(spec, CacheTensor::key, pool.key_cache, pool.key_layout, pool.quant, b, h,
                                    k_rows.data() + row, n);
        detail::write_integer_block(spec, CacheTensor::value, pool.value_cache, pool.value_layout, pool.quant,
                                    b, h, v_rows.data() + row, n);
      }
    }
    ctx_base += ctx;
  }
}

}  // namespace

std::vector<float> alibi_slopes_for(std::int32_t num_heads) {
  std::int32_t pow2 = 1;
  while (pow2 * 2 <= num_heads) pow2 *= 2;
  std::vector<float> slopes;
  const double base = std::pow(2.0, -8.0 / pow2);
  for (std::int32_t i = 1; i <= pow2; ++i) slopes.push_back(static_cast<float>(std::pow(base, i)));
  const double extra_base = std::pow(2.0, -4.0 / pow2);
  for (std::int32_t i = 0; static_cast<std::int32_t>(slopes.size()) < num_heads; ++i)
    slopes.push_back(static_cast<float>(std::pow(extra_base, 2 * i + 1)));
  return slopes;
}

QuantParamTensors QuantParamTensors::copy() const {
  QuantParamTensors q;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
    for (const bool zp : {false, true})
      if (param(t, zp).defined()) q.param(t, zp) = Tensor::copy_of(param(t, zp).view());
  return q;
}

KVQuantArgs QuantParamTensors::views(const KVQuant& spec) const {
  KVQuantArgs a;
  a.spec = spec;
  a.key_scale = key_scale;
  a.key_zero_point = key_zero_point;
  a.value_scale = value_scale;
  a.value_zero_point = value_zero_point;
  return a;
}

AttentionOptions attention_options(const Case& c, const Tensor& alibi_slopes,
                                   const QuantParamTensors& quant) {
  AttentionOptions o;
  if (c.scale) o.scale = static_cast<float>(*c.scale);
  o.k_scale = static_cast<float>(c.k_scale);
  o.v_scale = static_cast<float>(c.v_scale);
  o.k_head_scales.assign(c.k_head_scales.begin(), c.k_head_scales.end());
  o.v_head_scales.assign(c.v_head_scales.begin(), c.v_head_scales.end());
  if (c.alibi) o.alibi_slopes = alibi_slopes;
  if (c.integer_cache()) o.kv_quant = quant.views(c.kv_quant);
  const KernelFeatures features = kernel_features(c);
  o.soft_cap = static_cast<float>(features.soft_cap);
  o.sliding_window = features.sliding_window;
  return o;
}

namespace {

void set_paged_kv(PagedKVArgs& a, const Case& spec, const Tensor& key_cache, const Tensor& value_cache,
                  const Tensor& block_tables, const Tensor& seq_lens, const Tensor& alibi_slopes,
                  const QuantParamTensors& quant) {
  a.key_cache = key_cache;
  a.value_cache = value_cache;
  a.kv_layout = spec.kv_layout;
  a.block_tables = block_tables;
  a.seq_lens = seq_lens;
  a.options = attention_options(spec, alibi_slopes, quant);
}

}  // namespace

DecodeArgs DecodeCase::args() const {
  DecodeArgs a;
  set_paged_kv(a, spec, key_cache, value_cache, block_tables, seq_lens, alibi_slopes, quant);
  a.query = query;
  a.max_seq_len = spec.max_seq_len;
  return a;
}

PrefixArgs PrefixCase::args() const {
  PrefixArgs a;
  set_paged_kv(a, spec, key_cache, value_cache, block_tables, seq_lens, alibi_slopes, quant);
  a.query = query;
  a.key = key;
  a.value = value;
  a.query_start_loc = query_start_loc;
  a.max_query_len = spec.max_query_len;
  a.new_kv_source = kernel_features(spec).new_kv_source;
  return a;
}

std::int32_t pool_num_blocks(const Case& c) {
  if (c.num_blocks > 0) return c.num_blocks;
  std::int64_t needed = c.num_seqs;  // a spare block per sequence
  for (auto len : c.seq_lens) needed += blocks_for_tokens(len, c.block_size);
  require(needed <= std::numeric_limits<std::int32_t>::max(), "case ", c.id, ": seq_lens need ", needed,
          " cache blocks of ", c.block_size, " tokens, more than an int32 block table indexes");
  return static_cast<std::int32_t>(needed);
}

DecodeCase make_decode_case(const Case& spec) {
  check_case(spec, CaseKernel::decode);
  DecodeCase c;
  c.spec = spec;
  Rng rng(spec.seed);
  const std::int32_t bs = spec.block_size, hs = spec.head_size, nkv = spec.num_kv_heads;
  const std::int32_t G = spec.num_heads / nkv;
  PagedPool pool = make_pool(spec, rng);
  c.seq_lens = i32_tensor(spec.seq_lens);

  ValueDraw draw(spec, rng);
  c.query = Tensor(spec.dtype, {spec.num_seqs, spec.num_heads, hs});
  for (std::int32_t s = 0; s < spec.num_seqs; ++s)
    for (std::int32_t h = 0; h < spec.num_heads; ++h)
      for (std::int32_t d = 0; d < hs; ++d) c.query.set({s, h, d}, draw.qk());

  // Written straight into the caches: one rounding of value / scale (in fp64) to the cache dtype.
  const DType cd = spec.cache_storage_dtype();
  const auto es = static_cast<std::int64_t>(dtype_size(cd));
  // Integer caches: the rows of a sequence's KV head as the activation dtype holds them, each block
  // quantised whole once they are drawn (cases/integer_cache.hpp).
  const bool integer = spec.integer_cache();
  std::vector<float> k_rows, v_rows;
  std::vector<double> shared_row(static_cast<std::size_t>(hs));
  for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
    const std::int32_t len = spec.seq_lens[static_cast<std::size_t>(s)];
    const std::int32_t dominant = draw.dominant(len);
    if (integer) {
      k_rows.resize(static_cast<std::size_t>(len) * hs);
      v_rows.resize(k_rows.size());
    }
    for (std::int32_t h = 0; h < nkv; ++h) {
      // fp8 caches store value / scale; others store the value.
      const double ks = spec.kv_scale(CacheTensor::key, h);
      const double vs = spec.kv_scale(CacheTensor::value, h);
      for (auto& v : shared_row) v = draw.qk();
      for (std::int32_t t = 0; t < len; ++t) {
        const std::int64_t b = pool.slot_of(s, t, bs) / bs;
        for (std::int32_t d = 0; d < hs; ++d) {
          const double k = draw.k(shared_row, d, t == dominant, [&](std::int32_t dim) {
            return c.query.at({s, h * G, dim});  // the stored query (a sign of zero counts as +)
          });
          const double v = draw.v();
          if (integer) {
            const std::size_t i = static_cast<std::size_t>(t) * hs + d;
            k_rows[i] = static_cast<float>(round_to_dtype(spec.dtype, k));
            v_rows[i] = static_cast<float>(round_to_dtype(spec.dtype, v));
            continue;
          }
          encode_element(cd, k / ks, pool.key_cache.bytes() + pool.key_layout.offset(b, h, t % bs, d) * es);
          encode_element(cd, v / vs,
                         pool.value_cache.bytes() + pool.value_layout.offset(b, h, t % bs, d) * es);
        }
      }
      if (integer)
        for (std::int32_t t0 = 0; t0 < len; t0 += bs) {
          const std::int64_t b = pool.slot_of(s, t0, bs) / bs;
          const std::int32_t n = std::min(bs, len - t0);
          const std::size_t row = static_cast<std::size_t>(t0) * hs;
          detail::write_integer_block(spec, CacheTensor::key, pool.key_cache, pool.key_layout, pool.quant, b,
                                      h, k_rows.data() + row, n);
          detail::write_integer_block(spec, CacheTensor::value, pool.value_cache, pool.value_layout,
                                      pool.quant, b, h, v_rows.data() + row, n);
        }
    }
  }
  return with_pool(std::move(c), pool);
}

PrefixCase make_prefix_case(const Case& spec) {
  check_case(spec, CaseKernel::prefix);
  PrefixCase c;
  c.spec = spec;
  Rng rng(spec.seed);
  const std::int32_t num_seqs = spec.num_seqs;
  const std::int32_t bs = spec.block_size, hs = spec.head_size, nkv = spec.num_kv_heads, H = spec.num_heads;
  const std::int32_t G = H / nkv;
  const std::int32_t T = spec.num_tokens();
  const std::vector<std::int32_t> start = spec.query_start_locs();
  PagedPool pool = make_pool(spec, rng);
  c.seq_lens = i32_tensor(spec.seq_lens);
  c.query_start_loc = i32_tensor(start);

  // Values, drawn in a fixed order: query, then per sequence and KV head the K/V rows of every
  // position (context first, then the new tokens).
  ValueDraw draw(spec, rng);
  std::vector<double> query(static_cast<std::size_t>(T) * H * hs);
  for (auto& v : query) v = draw.qk();

  std::int32_t total_ctx = 0;
  for (std::int32_t s = 0; s < num_seqs; ++s) total_ctx += spec.context_len(static_cast<std::size_t>(s));
  std::vector<double> new_k(static_cast<std::size_t>(T) * nkv * hs), new_v(new_k.size());
  std::vector<double> ctx_k(static_cast<std::size_t>(total_ctx) * nkv * hs), ctx_v(ctx_k.size());
  Tensor ctx_slots(DType::i64, {total_ctx});
  c.slot_mapping = Tensor(DType::i64, {T});
  std::vector<double> shared_row(static_cast<std::size_t>(hs));
  std::int32_t ctx_base = 0;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const std::int32_t ctx = spec.context_len(si), len = spec.seq_lens[si];
    const std::int32_t dominant = draw.dominant(len);
    const std::int32_t last_token = start[si + 1] - 1;  // its query aligns with the dominant key
    for (std::int32_t h = 0; h < nkv; ++h) {
      for (auto& v : shared_row) v = draw.qk();
      for (std::int32_t pos = 0; pos < len; ++pos) {
        const bool in_ctx = pos < ctx;
        const std::size_t row = in_ctx ? static_cast<std::size_t>(ctx_base + pos)
                                       : static_cast<std::size_t>(start[si] + pos - ctx);
        double* k = (in_ctx ? ctx_k.data() : new_k.data()) + (row * nkv + h) * hs;
        double* v = (in_ctx ? ctx_v.data() : new_v.data()) + (row * nkv + h) * hs;
        for (std::int32_t d = 0; d < hs; ++d) {
          k[d] = draw.k(shared_row, d, pos == dominant && last_token >= start[si], [&](std::int32_t dim) {
            return query[(static_cast<std::size_t>(last_token) * H + h * G) * hs + dim];  // as drawn
          });
          v[d] = draw.v();
        }
      }
    }
    for (std::int32_t pos = 0; pos < ctx; ++pos)
      ctx_slots.data<std::int64_t>()[ctx_base + pos] = pool.slot_of(s, pos, bs);
    for (std::int32_t pos = ctx; pos < len; ++pos)
      c.slot_mapping.data<std::int64_t>()[start[si] + pos - ctx] = pool.slot_of(s, pos, bs);
    ctx_base += ctx;
  }
  c.query = from_f64(spec.dtype, {T, H, hs}, query);
  c.key = from_f64(spec.dtype, {T, nkv, hs}, new_k);
  c.value = from_f64(spec.dtype, {T, nkv, hs}, new_v);

  // The cache, written the way a serving engine writes it.
  const Tensor ctx_key = from_f64(spec.dtype, {total_ctx, nkv, hs}, ctx_k);
  const Tensor ctx_value = from_f64(spec.dtype, {total_ctx, nkv, hs}, ctx_v);
  if (spec.integer_cache()) {
    write_integer_prefix_cache(spec, pool, ctx_key, ctx_value, c.key, c.value, start);
    return with_pool(std::move(c), pool);
  }
  const AttentionOptions scales = attention_options(spec, {});
  reshape_and_cache(ctx_key, ctx_value, pool.key_cache, pool.value_cache, ctx_slots, spec.kv_layout, scales);
  if (spec.cache_new_tokens)
    reshape_and_cache(c.key, c.value, pool.key_cache, pool.value_cache, c.slot_mapping, spec.kv_layout,
                      scales);
  return with_pool(std::move(c), pool);
}

void write_new_tokens(PrefixCase& step) {
  reshape_and_cache(step.key, step.value, step.key_cache, step.value_cache, step.slot_mapping,
                    step.spec.kv_layout, attention_options(step.spec, {}, step.quant));
  step.spec.cache_new_tokens = true;
}

WriteAndAttendCase make_write_and_attend_case(const Case& spec) {
  check_case(spec, CaseKernel::write_and_attend);
  // The prefix step of these lengths with the new tokens not yet written, then their write.
  Case step = spec;
  step.kernel = CaseKernel::prefix;
  step.cache_new_tokens = false;
  WriteAndAttendCase w{make_prefix_case(step), {}, {}, {}};
  w.key_cache_before = Tensor::copy_of(w.step.key_cache.view());
  w.value_cache_before = Tensor::copy_of(w.step.value_cache.view());
  w.quant_before = w.step.quant.copy();
  write_new_tokens(w.step);
  return w;
}

ReshapeCase make_reshape_case(const Case& spec) {
  check_case(spec, CaseKernel::reshape_and_cache);
  // The same pool, context and new tokens as the prefix step of these lengths, with the new tokens
  // not yet written.
  Case step = spec;
  step.kernel = CaseKernel::prefix;
  step.cache_new_tokens = false;
  PrefixCase p = make_prefix_case(step);
  ReshapeCase r;
  r.spec = spec;
  const std::int64_t T = p.key.size(0), rows = T + spec.padding_tokens;
  const std::int64_t width = std::int64_t{spec.num_kv_heads} * spec.head_size;
  // Padding rows: values of their own stream (they must not reach the cache).
  Rng rng(spec.seed ^ 0x70616464ULL);  // "padd"
  for (Tensor* t : {&r.key, &r.value}) {
    const Tensor& src = t == &r.key ? p.key : p.value;
    std::vector<double> v = src.to_f64();
    v.resize(static_cast<std::size_t>(rows * width));
    for (std::size_t i = static_cast<std::size_t>(T * width); i < v.size(); ++i)
      v[i] = rng.uniform(-1.0, 1.0);
    *t = from_f64(spec.dtype, {rows, spec.num_kv_heads, spec.head_size}, v);
  }
  r.slot_mapping = Tensor(DType::i64, {rows});
  for (std::int64_t i = 0; i < rows; ++i)
    r.slot_mapping.data<std::int64_t>()[i] = i < T ? p.slot_mapping.data<std::int64_t>()[i] : -1;
  r.key_cache_before = Tensor::copy_of(p.key_cache.view());
  r.value_cache_before = Tensor::copy_of(p.value_cache.view());
  r.quant_before = p.quant.copy();
  reshape_and_cache(r.key, r.value, p.key_cache, p.value_cache, r.slot_mapping, spec.kv_layout,
                    attention_options(spec, {}, p.quant));
  r.quant = std::move(p.quant);
  r.key_cache = std::move(p.key_cache);
  r.value_cache = std::move(p.value_cache);
  r.block_tables = std::move(p.block_tables);
  r.seq_lens = std::move(p.seq_lens);
  return r;
}

}  // namespace pao::cases

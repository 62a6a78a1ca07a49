// Seeded prefix cases (see pao/prefix_case.hpp).
#include "pao/prefix_case.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "case_block_tables.hpp"
#include "pao/element.hpp"
#include "pao/error.hpp"
#include "pao/random.hpp"
#include "pao/reshape_and_cache.hpp"

namespace pao {

namespace {

std::string join(const std::vector<std::int32_t>& v) {
  std::ostringstream os;
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

Tensor from_f64(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  encode_from_f64(dtype, values.data(), t.bytes(), values.size());
  return t;
}

}  // namespace

std::int32_t PrefixCaseSpec::num_tokens() const {
  return std::accumulate(query_lens.begin(), query_lens.end(), std::int32_t{0});
}

std::string describe(const PrefixCaseSpec& s) {
  std::ostringstream os;
  os << "heads=" << s.num_heads << "/" << s.num_kv_heads << " hs=" << s.head_size << " bs=" << s.block_size
     << " dtype=" << dtype_name(s.dtype) << " cache=" << dtype_name(s.kv_cache_dtype)
     << " layout=" << (s.kv_layout == KVLayout::vllm ? "vllm" : "nhd") << " ctx=[" << join(s.context_lens)
     << "] q=[" << join(s.query_lens) << "] tiles=" << s.block_m << "/" << s.block_n << "/" << s.context_tile
     << " alibi=" << s.alibi << " soft_cap=" << s.soft_cap << " window=" << s.sliding_window
     << " k_scale=" << s.k_scale << " v_scale=" << s.v_scale << " dist=" << to_string(s.distribution)
     << " cache_new=" << s.cache_new_tokens << " seed=" << s.seed;
  return os.str();
}

PrefixArgs PrefixCase::args() const {
  PrefixArgs a;
  a.query = query;
  a.key = key;
  a.value = value;
  a.key_cache = key_cache;
  a.value_cache = value_cache;
  a.kv_layout = spec.kv_layout;
  a.block_tables = block_tables;
  a.seq_lens = seq_lens;
  a.query_start_loc = query_start_loc;
  a.options.scale = spec.scale;
  a.options.k_scale = spec.k_scale;
  a.options.v_scale = spec.v_scale;
  if (spec.alibi) a.options.alibi_slopes = alibi_slopes;
  a.options.soft_cap = spec.soft_cap;
  a.options.sliding_window = spec.sliding_window;
  a.block_m = spec.block_m;
  a.block_n = spec.block_n;
  a.context_tile = spec.context_tile;
  a.max_query_len = spec.max_query_len;
  return a;
}

PrefixCase make_prefix_case(const PrefixCaseSpec& spec) {
  const std::int32_t num_seqs = spec.num_seqs();
  require(spec.query_lens.size() == spec.context_lens.size(), "case: query_lens has ", spec.query_lens.size(),
          " entries but context_lens has ", spec.context_lens.size());
  require(spec.num_kv_heads > 0 && spec.num_heads % spec.num_kv_heads == 0,
          "case: num_heads = ", spec.num_heads, " is not a multiple of num_kv_heads = ", spec.num_kv_heads);
  require(spec.block_size > 0 && spec.head_size > 0, "case: block_size and head_size must be positive");
  for (std::int32_t s = 0; s < num_seqs; ++s)
    require(spec.context_lens[static_cast<std::size_t>(s)] >= 0 &&
                spec.query_lens[static_cast<std::size_t>(s)] >= 0,
            "case: negative length in sequence ", s);

  PrefixCase c;
  c.spec = spec;
  Rng rng(spec.seed);
  const std::int32_t bs = spec.block_size, hs = spec.head_size, nkv = spec.num_kv_heads, H = spec.num_heads;
  const std::int32_t G = H / nkv;
  const std::int32_t T = spec.num_tokens();

  std::vector<std::int32_t> seq_len(static_cast<std::size_t>(num_seqs)),
      start(static_cast<std::size_t>(num_seqs) + 1, 0);
  std::int32_t needed = 0, widest = 0;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    const auto i = static_cast<std::size_t>(s);
    seq_len[i] = spec.context_lens[i] + spec.query_lens[i];
    start[i + 1] = start[i] + spec.query_lens[i];
    needed += (seq_len[i] + bs - 1) / bs;
    widest = std::max(widest, (seq_len[i] + bs - 1) / bs);
  }
  const std::int32_t num_blocks = spec.num_blocks > 0 ? spec.num_blocks : needed + num_seqs;
  require(num_blocks >= needed, "case: num_blocks = ", num_blocks, " but the sequences need ", needed);

  const std::int64_t x = 16 / static_cast<std::int64_t>(dtype_size(spec.kv_cache_dtype));
  Shape key_shape, value_shape;
  if (spec.kv_layout == KVLayout::vllm) {
    require(hs % x == 0, "case: head_size ", hs, " is not divisible by x = ", x);
    key_shape = {num_blocks, nkv, hs / x, bs, x};
    value_shape = {num_blocks, nkv, hs, bs};
  } else {
    key_shape = value_shape = {num_blocks, bs, nkv, hs};
  }
  const double poison = spec.poison_unused ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  c.key_cache = Tensor::filled(spec.kv_cache_dtype, key_shape, poison);
  c.value_cache = Tensor::filled(spec.kv_cache_dtype, value_shape, poison);

  // Block tables: non-contiguous, garbage past each sequence's last block (case_block_tables.hpp).
  const std::int32_t columns = std::max(widest + spec.extra_table_columns, 1);
  c.block_tables = Tensor(DType::i32, {num_seqs, columns});
  c.seq_lens = Tensor(DType::i32, {num_seqs});
  c.query_start_loc = Tensor(DType::i32, {num_seqs + 1});
  std::vector<std::int32_t> used_blocks;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    used_blocks.push_back((seq_len[static_cast<std::size_t>(s)] + bs - 1) / bs);
    c.seq_lens.data<std::int32_t>()[s] = seq_len[static_cast<std::size_t>(s)];
  }
  const std::int32_t* table = c.block_tables.data<std::int32_t>();
  detail::fill_block_tables(c.block_tables.data<std::int32_t>(), columns, used_blocks, num_blocks, rng);
  std::copy(start.begin(), start.end(), c.query_start_loc.data<std::int32_t>());
  auto slot_of = [&](std::int32_t s, std::int32_t pos) {
    return static_cast<std::int64_t>(table[static_cast<std::size_t>(s) * columns + pos / bs]) * bs + pos % bs;
  };

  // Values, drawn in a fixed order: query, then per sequence and KV head the K/V rows of every
  // position (context first, then the new tokens).
  const double r = 1.0 / std::sqrt(static_cast<double>(hs));
  auto draw = [&](double range) {
    if (spec.distribution == ValueDistribution::small_integers)
      return static_cast<double>(rng.between(-4, 4)) * 0.125;
    return rng.uniform(-range, range);
  };
  const bool big = spec.distribution == ValueDistribution::large_logits ||
                   spec.distribution == ValueDistribution::dominant_token;
  const double qk_range = big ? (spec.distribution == ValueDistribution::large_logits ? 4.0 : 1.0) : r;
  std::vector<double> query(static_cast<std::size_t>(T) * H * hs);
  for (auto& v : query) v = draw(qk_range);

  std::int32_t total_ctx = 0;
  for (auto n : spec.context_lens) total_ctx += n;
  std::vector<double> new_k(static_cast<std::size_t>(T) * nkv * hs), new_v(new_k.size());
  std::vector<double> ctx_k(static_cast<std::size_t>(total_ctx) * nkv * hs), ctx_v(ctx_k.size());
  Tensor ctx_slots(DType::i64, {total_ctx});
  c.slot_mapping = Tensor(DType::i64, {T});
  std::vector<double> shared_row(static_cast<std::size_t>(hs));
  std::int32_t ctx_base = 0;
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const std::int32_t ctx = spec.context_lens[si], len = seq_len[si];
    const std::int32_t dominant =
        len > 0 ? static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(len))) : 0;
    const std::int32_t last_token = start[si + 1] - 1;  // its query aligns with the dominant key
    for (std::int32_t h = 0; h < nkv; ++h) {
      for (auto& v : shared_row) v = draw(qk_range);
      for (std::int32_t pos = 0; pos < len; ++pos) {
        const bool in_ctx = pos < ctx;
        const std::size_t row = in_ctx ? static_cast<std::size_t>(ctx_base + pos)
                                       : static_cast<std::size_t>(start[si] + pos - ctx);
        double* k = (in_ctx ? ctx_k.data() : new_k.data()) + (row * nkv + h) * hs;
        double* v = (in_ctx ? ctx_v.data() : new_v.data()) + (row * nkv + h) * hs;
        for (std::int32_t d = 0; d < hs; ++d) {
          double kd = draw(qk_range);
          switch (spec.distribution) {
            case ValueDistribution::near_ties:
              kd = shared_row[static_cast<std::size_t>(d)] * (1.0 + 1e-3 * rng.uniform(-1, 1));
              break;
            case ValueDistribution::all_equal:
              kd = shared_row[static_cast<std::size_t>(d)];
              break;
            case ValueDistribution::dominant_token:
              if (pos == dominant && last_token >= start[si])
                kd = 4.0 *
                     (query[((static_cast<std::size_t>(last_token) * H + h * G) * hs) + d] >= 0 ? 1.0 : -1.0);
              break;
            default:
              break;
          }
          k[d] = kd;
          v[d] = draw(big ? 1.0 : r);
        }
      }
    }
    for (std::int32_t pos = 0; pos < ctx; ++pos)
      ctx_slots.data<std::int64_t>()[ctx_base + pos] = slot_of(s, pos);
    for (std::int32_t pos = ctx; pos < len; ++pos)
      c.slot_mapping.data<std::int64_t>()[start[si] + pos - ctx] = slot_of(s, pos);
    ctx_base += ctx;
  }
  c.query = from_f64(spec.dtype, {T, H, hs}, query);
  c.key = from_f64(spec.dtype, {T, nkv, hs}, new_k);
  c.value = from_f64(spec.dtype, {T, nkv, hs}, new_v);

  // The cache, written the way a serving engine writes it.
  AttentionOptions scales;
  scales.k_scale = spec.k_scale;
  scales.v_scale = spec.v_scale;
  const Tensor ctx_key = from_f64(spec.dtype, {total_ctx, nkv, hs}, ctx_k);
  const Tensor ctx_value = from_f64(spec.dtype, {total_ctx, nkv, hs}, ctx_v);
  reshape_and_cache(ctx_key, ctx_value, c.key_cache, c.value_cache, ctx_slots, spec.kv_layout, scales);
  if (spec.cache_new_tokens)
    reshape_and_cache(c.key, c.value, c.key_cache, c.value_cache, c.slot_mapping, spec.kv_layout, scales);

  if (spec.alibi) {
    const auto slopes = alibi_slopes_for(H);
    c.alibi_slopes = Tensor(DType::f32, {H});
    std::copy(slopes.begin(), slopes.end(), c.alibi_slopes.data<float>());
  }
  return c;
}

}  // namespace pao

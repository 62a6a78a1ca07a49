// Seeded decode cases.
#include "pao/decode_case.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "case_block_tables.hpp"
#include "pao/element.hpp"
#include "pao/error.hpp"
#include "pao/random.hpp"

namespace pao {

namespace {

struct Named {
  ValueDistribution d;
  const char* name;
};
constexpr Named kDistributions[] = {
    {ValueDistribution::uniform, "uniform"},     {ValueDistribution::large_logits, "large_logits"},
    {ValueDistribution::near_ties, "near_ties"}, {ValueDistribution::dominant_token, "dominant_token"},
    {ValueDistribution::all_equal, "all_equal"}, {ValueDistribution::small_integers, "small_integers"},
};

/// Writes element (block, kv_head, token_in_block, dim) of a K or V cache tensor.
void set_cache(Tensor& cache, KVLayout layout, bool is_key, std::int64_t block, std::int64_t head,
               std::int64_t token, std::int64_t dim, double value) {
  const Shape& n = cache.shape();
  std::int64_t offset;
  if (layout == KVLayout::nhd) {
    offset = ((block * n[1] + token) * n[2] + head) * n[3] + dim;
  } else if (!is_key) {
    offset = ((block * n[1] + head) * n[2] + dim) * n[3] + token;
  } else {
    const std::int64_t x = n[4];
    offset = (((block * n[1] + head) * n[2] + dim / x) * n[3] + token) * x + dim % x;
  }
  encode_element(cache.dtype(), value,
                 cache.bytes() + offset * static_cast<std::int64_t>(dtype_size(cache.dtype())));
}

}  // namespace

std::string to_string(ValueDistribution d) {
  for (const auto& n : kDistributions)
    if (n.d == d) return n.name;
  return "?";
}

ValueDistribution parse_value_distribution(const std::string& name) {
  for (const auto& n : kDistributions)
    if (name == n.name) return n.d;
  fail("distribution: unknown value '", name,
       "' (expected uniform, large_logits, near_ties, dominant_token, all_equal, small_integers)");
}

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

DecodeArgs DecodeCase::args() const {
  DecodeArgs a;
  a.query = query;
  a.key_cache = key_cache;
  a.value_cache = value_cache;
  a.kv_layout = spec.kv_layout;
  a.block_tables = block_tables;
  a.seq_lens = seq_lens;
  a.max_seq_len = spec.max_seq_len;
  a.partition_size = spec.partition_size;
  a.options.scale = spec.scale;
  a.options.k_scale = spec.k_scale;
  a.options.v_scale = spec.v_scale;
  if (spec.alibi) a.options.alibi_slopes = alibi_slopes;
  a.options.soft_cap = spec.soft_cap;
  a.options.sliding_window = spec.sliding_window;
  return a;
}

DecodeCase make_decode_case(const DecodeCaseSpec& spec) {
  require(spec.num_seqs == static_cast<std::int32_t>(spec.seq_lens.size()), "case: seq_lens has ",
          spec.seq_lens.size(), " entries but num_seqs = ", spec.num_seqs);
  require(spec.num_kv_heads > 0 && spec.num_heads % spec.num_kv_heads == 0,
          "case: num_heads = ", spec.num_heads, " is not a multiple of num_kv_heads = ", spec.num_kv_heads);
  require(spec.block_size > 0 && spec.head_size > 0, "case: block_size and head_size must be positive");
  DecodeCase c;
  c.spec = spec;
  Rng rng(spec.seed);
  const std::int32_t bs = spec.block_size, hs = spec.head_size, nkv = spec.num_kv_heads;
  const std::int32_t G = spec.num_heads / nkv;

  std::int32_t needed = 0, widest = 0;
  for (auto len : spec.seq_lens) {
    require(len >= 0, "case: negative seq_len ", len);
    needed += (len + bs - 1) / bs;
    widest = std::max(widest, (len + bs - 1) / bs);
  }
  const std::int32_t num_blocks = spec.num_blocks > 0 ? spec.num_blocks : needed + spec.num_seqs;
  require(num_blocks >= needed, "case: num_blocks = ", num_blocks, " but the sequences need ", needed);

  const std::int64_t x = 16 / static_cast<std::int64_t>(dtype_size(spec.kv_cache_dtype));
  if (spec.kv_layout == KVLayout::vllm) {
    require(hs % x == 0, "case: head_size ", hs, " is not divisible by x = ", x);
    c.key_cache = Tensor(spec.kv_cache_dtype, {num_blocks, nkv, hs / x, bs, x});
    c.value_cache = Tensor(spec.kv_cache_dtype, {num_blocks, nkv, hs, bs});
  } else {
    c.key_cache = Tensor(spec.kv_cache_dtype, {num_blocks, bs, nkv, hs});
    c.value_cache = Tensor(spec.kv_cache_dtype, {num_blocks, bs, nkv, hs});
  }
  const double poison = spec.poison_unused ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  for (Tensor* t : {&c.key_cache, &c.value_cache}) *t = Tensor::filled(t->dtype(), t->shape(), poison);

  // Block tables: non-contiguous, garbage past each sequence's last block (case_block_tables.hpp).
  const std::int32_t columns = widest + spec.extra_table_columns;
  c.block_tables = Tensor(DType::i32, {spec.num_seqs, std::max(columns, 1)});
  c.seq_lens = Tensor(DType::i32, {spec.num_seqs});
  std::vector<std::int32_t> used_blocks;
  for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
    const std::int32_t len = spec.seq_lens[static_cast<std::size_t>(s)];
    c.seq_lens.set({s}, len);
    used_blocks.push_back((len + bs - 1) / bs);
  }
  detail::fill_block_tables(c.block_tables.data<std::int32_t>(), c.block_tables.size(1), used_blocks,
                            num_blocks, rng);

  // Values.
  const double r = 1.0 / std::sqrt(static_cast<double>(hs));
  auto draw = [&](double lo_hi) {
    if (spec.distribution == ValueDistribution::small_integers)
      return static_cast<double>(rng.between(-4, 4)) * 0.125;
    return rng.uniform(-lo_hi, lo_hi);
  };
  const bool big = spec.distribution == ValueDistribution::large_logits ||
                   spec.distribution == ValueDistribution::dominant_token;
  const double qk_range = big ? (spec.distribution == ValueDistribution::large_logits ? 4.0 : 1.0) : r;
  c.query = Tensor(spec.dtype, {spec.num_seqs, spec.num_heads, hs});
  for (std::int32_t s = 0; s < spec.num_seqs; ++s)
    for (std::int32_t h = 0; h < spec.num_heads; ++h)
      for (std::int32_t d = 0; d < hs; ++d) c.query.set({s, h, d}, draw(qk_range));

  const bool fp8 = is_fp8(spec.kv_cache_dtype);
  const double ks = fp8 ? spec.k_scale : 1.0, vs = fp8 ? spec.v_scale : 1.0;
  std::vector<double> shared_row(static_cast<std::size_t>(hs));
  for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
    const std::int32_t len = spec.seq_lens[static_cast<std::size_t>(s)];
    const std::int32_t dominant =
        len > 0 ? static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(len))) : 0;
    for (std::int32_t h = 0; h < nkv; ++h) {
      for (auto& v : shared_row) v = draw(qk_range);
      for (std::int32_t t = 0; t < len; ++t) {
        const std::int32_t b = c.block_tables.data<std::int32_t>()[s * c.block_tables.size(1) + t / bs];
        for (std::int32_t d = 0; d < hs; ++d) {
          double k = draw(qk_range);
          switch (spec.distribution) {
            case ValueDistribution::near_ties:
              k = shared_row[static_cast<std::size_t>(d)] * (1.0 + 1e-3 * rng.uniform(-1, 1));
              break;
            case ValueDistribution::all_equal:
              k = shared_row[static_cast<std::size_t>(d)];
              break;
            case ValueDistribution::dominant_token:
              if (t == dominant) k = 4.0 * (c.query.at({s, h * G, d}) >= 0 ? 1.0 : -1.0);
              break;
            default:
              break;
          }
          set_cache(c.key_cache, spec.kv_layout, true, b, h, t % bs, d, k / ks);
          set_cache(c.value_cache, spec.kv_layout, false, b, h, t % bs, d, draw(big ? 1.0 : r) / vs);
        }
      }
    }
  }

  if (spec.alibi) {
    const auto slopes = alibi_slopes_for(spec.num_heads);
    c.alibi_slopes = Tensor(DType::f32, {spec.num_heads});
    for (std::int32_t h = 0; h < spec.num_heads; ++h)
      c.alibi_slopes.set({h}, slopes[static_cast<std::size_t>(h)]);
  }
  return c;
}

}  // namespace pao

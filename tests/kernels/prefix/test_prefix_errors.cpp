// Bad input to the prefix kernel gets a pao::Error that names the tensor, the index and the rule.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "pao/core/error.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "support/prefix_cases.hpp"

using namespace pao;

namespace {

struct BadInput {
  const char* what;
  std::function<void(PrefixArgs&, std::vector<Tensor>& keep)> edit;
  const char* message;
};

/// The mixed batch: (context, new) = (0, 37) (37, 1) (45, 9) (20, 0) (3, 40); 4 heads, 2 kv heads,
/// head_size 64, block_size 16, f16.
const cases::PrefixCase& base_case() {
  static const cases::PrefixCase c = cases::make_prefix_case(test::mixed_batch());
  return c;
}

Tensor i32_tensor(std::vector<std::int32_t> v) {
  Tensor t(DType::i32, {static_cast<std::int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<std::int32_t>());
  return t;
}

}  // namespace

TEST_CASE("prefix errors name the tensor, the index and the rule") {
  const cases::PrefixCase& c = base_case();
  const std::vector<BadInput> cases = {
      {"query dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::i32, {87, 4, 64}));
         a.query = keep.back();
       },
       "query: dtype i32, expected f32, f16 or bf16"},
      {"query rank",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f16, {87, 256}));
         a.query = keep.back();
       },
       "query: rank 2 with shape [87, 256], expected [num_tokens, num_heads, head_size]"},
      {"key dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::bf16, {87, 2, 64}));
         a.key = keep.back();
       },
       "key: dtype bf16 differs from the query's f16"},
      {"key tokens",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f16, {86, 2, 64}));
         a.key = keep.back();
       },
       "key: shape [86, 2, 64] does not match [num_tokens, num_kv_heads, head_size] (dim 0 should be 87)"},
      {"value shape",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f16, {87, 1, 64}));
         a.value = keep.back();
       },
       "value: shape [87, 1, 64] does not match [num_tokens, num_kv_heads, head_size] like key (dim 1 should "
       "be 2)"},
      {"heads not divisible",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f16, {87, 3, 64}));
         a.key = a.value = keep.back();
       },
       "query: num_heads = 4 is not a multiple of num_kv_heads = 3 (key dim 1)"},
      {"cache kv heads",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f16, {87, 1, 64}));
         a.key = a.value = keep.back();
       },
       "key_cache: 2 kv heads, expected 1"},
      {"cache dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::bf16, c.key_cache.shape()));
         keep.push_back(Tensor(DType::bf16, c.value_cache.shape()));
         a.key_cache = keep[keep.size() - 2];
         a.value_cache = keep.back();
       },
       "key_cache: dtype bf16 must equal the query's (f16) or be a cache format (fp8_e4m3, fp8_e5m2, u8, "
       "i8)"},
      {"value cache dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::bf16, c.value_cache.shape()));
         a.value_cache = keep.back();
       },
       "value_cache: dtype bf16 differs from key_cache's f16"},
      {"cache head size",
       [&](PrefixArgs& a, auto& keep) {
         Shape s = c.key_cache.shape();
         s[2] = 4;
         keep.push_back(Tensor(DType::f16, s));
         a.key_cache = keep.back();
       },
       "key_cache: shape"},
      {"seq_lens dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::i64, {5}));
         a.seq_lens = keep.back();
       },
       "seq_lens: dtype i64, expected i32"},
      {"query_start_loc length",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({0, 37, 38, 47, 47}));
         a.query_start_loc = keep.back();
       },
       "query_start_loc: shape [5] does not match [num_seqs + 1] (dim 0 should be 6)"},
      {"query_start_loc first",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({1, 37, 38, 47, 47, 87}));
         a.query_start_loc = keep.back();
       },
       "query_start_loc[0] = 1: must be 0"},
      {"query_start_loc monotone",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({0, 37, 38, 30, 47, 87}));
         a.query_start_loc = keep.back();
       },
       "query_start_loc[3] = 30 is less than query_start_loc[2] = 38: offsets must be non-decreasing"},
      {"query_start_loc past num_tokens",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({0, 37, 38, 90, 90, 90}));
         a.query_start_loc = keep.back();
       },
       "query_start_loc[3] = 90 exceeds num_tokens = 87 (query dim 0)"},
      {"query_start_loc last",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({0, 37, 38, 47, 47, 80}));
         a.query_start_loc = keep.back();
       },
       "query_start_loc[5] = 80 does not match num_tokens = 87 (query dim 0)"},
      {"seq_len < query_len",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(i32_tensor({37, 38, 54, 20, 39}));
         a.seq_lens = keep.back();
       },
       "seq_lens[4] = 39 is less than its query_len 40 (query_start_loc[5] - query_start_loc[4]); seq_len "
       "counts context + new tokens"},
      {"block table too short",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::i32, {5, 2}));
         a.block_tables = keep.back();
       },
       "block_tables[1]: the context of 37 tokens (seq_lens[1] = 38 minus query_len 1) needs 3 blocks of 16, "
       "but the table has 2 columns"},
      {"block id",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor::copy_of(c.block_tables));
         keep.back().set({2, 1}, 9999);
         a.block_tables = keep.back();
       },
       "block_tables[2][1] = 9999: block id out of range [0, "},
      {"block_tables dtype",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::i64, {5, 8}));
         a.block_tables = keep.back();
       },
       "block_tables: dtype i64, expected i32"},
      {"block_tables rows",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::i32, {4, 8}));
         a.block_tables = keep.back();
       },
       "block_tables: shape [4, 8] does not match [num_seqs, max_num_blocks_per_seq] (dim 0 should be 5)"},
      {"max_query_len", [&](PrefixArgs& a, auto&) { a.max_query_len = 39; },
       "query_lens[4] = 40 exceeds max_query_len = 39"},
      {"alibi shape",
       [&](PrefixArgs& a, auto& keep) {
         keep.push_back(Tensor(DType::f32, {3}));
         a.options.alibi_slopes = keep.back();
       },
       "alibi_slopes: shape [3] does not match [num_heads] (dim 0 should be 4)"},
      {"sliding window", [&](PrefixArgs& a, auto&) { a.options.sliding_window = -2; },
       "sliding_window = -2: must be >= 0"},
      {"soft cap", [&](PrefixArgs& a, auto&) { a.options.soft_cap = -1; }, "soft_cap = -1: must be >= 0"},
  };
  for (const auto& bad : cases) {
    INFO(bad.what);
    PrefixArgs args = c.args();
    std::vector<Tensor> keep;
    keep.reserve(4);
    bad.edit(args, keep);
    for (Precision prec : {Precision::kernel, Precision::exact})
      CHECK_THROWS_WITH_AS(prefix_attention(args, prec, c.spec), doctest::Contains(bad.message), Error);
  }
  // The tiles are the tuning's (pao/plan/kernel_tuning.hpp): its rules, checked by the plan.
  struct BadTiles {
    std::int32_t block_m, block_n, context_tile;
    const char* message;
  };
  for (const BadTiles& bad : {BadTiles{0, 64, 32, "block_m = 0: must be positive"},
                              BadTiles{128, -64, 32, "block_n = -64: must be positive"},
                              BadTiles{128, 64, 0, "context_tile = 0: must be positive"}}) {
    INFO(bad.message);
    KernelTuning t = c.spec;
    t.block_m = bad.block_m, t.block_n = bad.block_n, t.context_tile = bad.context_tile;
    for (Precision prec : {Precision::kernel, Precision::exact})
      CHECK_THROWS_WITH_AS(prefix_attention(c.args(), prec, t), doctest::Contains(bad.message), Error);
  }
}

TEST_CASE("prefix errors on fp8 caches: scales and undeclared u8") {
  cases::Case spec = test::mixed_batch();
  spec.kv_cache_dtype = DType::fp8_e4m3;
  const cases::PrefixCase c = cases::make_prefix_case(spec);
  PrefixArgs args = c.args();
  args.options.k_scale = 0.0f;
  CHECK_THROWS_WITH_AS(prefix_attention(args, Precision::kernel, c.spec),
                       doctest::Contains("k_scale = 0: an fp8 scale must be finite and positive"), Error);
  args = c.args();
  args.options.v_head_scales = {1.0f};
  CHECK_THROWS_WITH_AS(prefix_attention(args, Precision::exact, c.spec),
                       doctest::Contains("v_scale_per_head: 1 entries, expected num_kv_heads = 2"), Error);
  args = c.args();
  args.key_cache.dtype = args.value_cache.dtype = DType::u8;
  CHECK_THROWS_WITH_AS(
      prefix_attention(args, Precision::kernel, c.spec),
      doctest::Contains(
          "fp8 codes in a uint8 tensor (vLLM's fp8 caches) must be declared fp8_e4m3 or fp8_e5m2"),
      Error);
}

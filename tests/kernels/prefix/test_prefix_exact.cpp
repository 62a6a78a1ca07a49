// Exact precision of the prefix kernel: against an independent dense fp64 formulation, across tile
// sizes, against exact V1 decode for one-token queries, and its one final rounding.
#include <doctest/doctest.h>

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/prefix_cases.hpp"
#include "support/prefix_reference.hpp"

using namespace pao;

namespace {

using test::max_abs;
using test::max_abs_diff;

/// Exact V1 decode over a prefix case whose every query_len is 1: its query rows are then
/// [num_seqs, num_heads, head_size], one token per sequence, read from the same cache.
std::vector<double> exact_v1_of_one_token_queries(const cases::PrefixCase& c) {
  DecodeArgs d;
  d.query = c.query;
  d.key_cache = c.key_cache;
  d.value_cache = c.value_cache;
  d.kv_layout = c.spec.kv_layout;
  d.block_tables = c.block_tables;
  d.seq_lens = c.seq_lens;
  d.options = c.args().options;
  return paged_attention_v1(d, Precision::exact, c.spec).out_f64.to_f64();
}

}  // namespace

TEST_CASE("exact prefix equals a dense fp64 attention to 1e-12 relative") {
  for (const auto& spec : test::all_prefix_cases()) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto ref = test::dense_prefix_reference(c);
    const auto got = prefix_attention(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    REQUIRE(got.size() == ref.size());
    CHECK(max_abs_diff(got, ref) <= 1e-12 * max_abs(ref));
  }
}

TEST_CASE("exact prefix does not depend on the tile sizes") {
  const std::int32_t tiles[][3] = {{16, 16, 16}, {64, 32, 32}, {128, 64, 32}, {8, 24, 40}};
  auto specs = test::prefix_feature_cases();
  specs.push_back(test::prefix_grid_cases()[1]);  // fp8
  for (const auto& base : specs) {
    const cases::PrefixCase c = cases::make_prefix_case(base);
    std::vector<double> first;
    for (const auto& t : tiles) {
      KernelTuning tuning = base;
      tuning.block_m = t[0];
      tuning.block_n = t[1];
      tuning.context_tile = t[2];
      INFO(test::describe(base), " block_m=", t[0], " block_n=", t[1], " context_tile=", t[2]);
      const auto got = prefix_attention(c.args(), Precision::exact, tuning).out_f64.to_f64();
      if (first.empty())
        first = got;
      else
        CHECK(max_abs_diff(got, first) <= 1e-12 * max_abs(first));
    }
  }
}

TEST_CASE("a one-token query with a context equals exact V1 decode of the same sequence") {
  // The new token is written into the cache too (cache_new_tokens), as vLLM does before attention,
  // so decode reads the same K/V from the cache that prefix reads from key / value. With an fp8
  // cache that holds only where quantisation is exact: small integers and a power-of-two scale.
  std::vector<cases::Case> specs;
  for (auto spec : test::all_prefix_cases()) {
    test::set_lengths(spec, {0, 37, 45, 16, 130}, {1, 1, 1, 1, 1});
    spec.cache_new_tokens = true;
    if (is_fp8(spec.cache_storage_dtype())) {
      spec.distribution = cases::ValueDistribution::small_integers;
      spec.k_scale = 0.25f;
      spec.v_scale = 0.5f;
    }
    // An integer cache's codes are never exact: the new token is read back from the cache (as
    // decode reads it), the fp8 test below for any values.
    if (is_integer_cache(spec.cache_storage_dtype())) spec.new_kv_source = NewKVSource::cache;
    specs.push_back(spec);
  }
  for (const auto& spec : specs) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto decode = exact_v1_of_one_token_queries(c);
    const auto prefix = prefix_attention(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    CHECK(max_abs_diff(prefix, decode) <= 1e-12 * max_abs(decode));
  }
}

TEST_CASE("exact output is the one rounding of the fp64 output") {
  for (const auto& spec : test::prefix_grid_cases()) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const PrefixOutputs o = prefix_attention(c.args(), Precision::exact, c.spec);
    const auto f64 = o.out_f64.to_f64();
    const auto rounded = o.out.to_f64();
    REQUIRE(f64.size() == rounded.size());
    for (std::size_t i = 0; i < f64.size(); ++i) REQUIRE(rounded[i] == round_to_dtype(spec.dtype, f64[i]));
  }
}

TEST_CASE("new_kv_source cache: the new tokens' K/V are read back from the quantised cache") {
  // FlashAttention-, FlashInfer- and IPEX-based backends write the chunk with reshape_and_cache
  // first and read every token from the cache. With an fp8 cache that differs from vLLM's Triton
  // kernel (new tokens from the unquantised key / value); with the activation dtype it does not.
  int fp8_cases = 0, integer_cases = 0;
  for (auto spec : test::all_prefix_cases()) {
    if (!spec.cache_new_tokens) continue;
    for (KVLayout layout : kAllKVLayouts) {
      spec.kv_layout = layout;
      if (layout == KVLayout::vllm && spec.head_size % vllm_key_x(spec.cache_storage_dtype()) != 0) continue;
      spec.new_kv_source = NewKVSource::input;
      const cases::PrefixCase input = cases::make_prefix_case(spec);
      spec.new_kv_source = NewKVSource::cache;
      const cases::PrefixCase cached = cases::make_prefix_case(spec);
      INFO(test::describe(spec), " layout=", kv_layout_name(layout));
      const auto ref = test::dense_prefix_reference(cached);
      const auto got = prefix_attention(cached.args(), Precision::exact, cached.spec).out_f64.to_f64();
      REQUIRE(got.size() == ref.size());
      CHECK(max_abs_diff(got, ref) <= 1e-12 * max_abs(ref));
      const auto from_input = prefix_attention(input.args(), Precision::exact, input.spec).out_f64.to_f64();
      const bool any_new = *std::max_element(spec.query_lens.begin(), spec.query_lens.end()) > 0;
      const DType cd = spec.cache_storage_dtype();
      if (is_integer_cache(cd) && any_new) {
        ++integer_cases;
        CHECK(max_abs_diff(got, from_input) > 1e-6 * max_abs(ref));  // quantisation shows
      } else if (is_fp8(cd) && any_new && spec.distribution != cases::ValueDistribution::small_integers) {
        ++fp8_cases;
        CHECK(max_abs_diff(got, from_input) > 1e-6 * max_abs(ref));  // quantisation shows
      } else if (!is_fp8(cd) && !is_integer_cache(cd)) {
        CHECK(max_abs_diff(got, from_input) == 0.0);
      }
    }
  }
  CHECK(fp8_cases > 0);
  CHECK(integer_cases > 0);
}

TEST_CASE("new_kv_source cache: a one-token query equals exact V1 decode, whatever the fp8 values") {
  // Decode reads every token from the cache, so with the new token read back from the cache too the
  // two kernels see the same K/V for any values and scales (the input-source test above needs
  // small integers and power-of-two scales for that).
  int n = 0;
  for (auto spec : test::all_prefix_cases()) {
    if (!is_fp8(spec.cache_storage_dtype())) continue;
    test::set_lengths(spec, {0, 37, 45, 16, 130}, {1, 1, 1, 1, 1});
    spec.cache_new_tokens = true;
    spec.new_kv_source = NewKVSource::cache;
    spec.distribution = cases::ValueDistribution::uniform;
    spec.k_scale = 0.0173;
    spec.v_scale = 0.031;
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto decode = exact_v1_of_one_token_queries(c);
    const auto prefix = prefix_attention(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    CHECK(max_abs_diff(prefix, decode) <= 1e-12 * max_abs(decode));
    ++n;
  }
  CHECK(n > 0);
}

TEST_CASE("new_kv_source cache needs the whole sequence in the block table") {
  cases::Case spec = test::prefix_grid_cases()[2];  // fp8_e5m2, new tokens cached
  REQUIRE(spec.cache_new_tokens);
  spec.new_kv_source = NewKVSource::cache;
  const cases::PrefixCase c = cases::make_prefix_case(spec);
  PrefixArgs args = c.args();
  // One column: the context of sequence 0 may fit, its new tokens do not.
  Tensor narrow(DType::i32, {c.block_tables.size(0), 1});
  for (std::int64_t s = 0; s < c.block_tables.size(0); ++s) narrow.set({s, 0}, c.block_tables.at({s, 0}));
  args.block_tables = narrow;
  CHECK_THROWS_WITH_AS(prefix_attention(args, Precision::exact, c.spec),
                       doctest::Contains("new_kv_source cache: the new tokens are read from the cache too"),
                       pao::Error);
}

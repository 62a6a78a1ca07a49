// Exact precision of the prefix kernel: against an independent dense fp64 formulation, across tile
// sizes, against exact V1 decode for one-token queries, and its one final rounding.
#include <doctest/doctest.h>

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

}  // namespace

TEST_CASE("exact prefix equals a dense fp64 attention to 1e-12 relative") {
  for (const auto& spec : test::all_prefix_cases()) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto ref = test::dense_prefix_reference(c);
    const auto got = prefix_attention(c.args(), Precision::exact).out_f64.to_f64();
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
      PrefixArgs args = c.args();
      args.block_m = t[0];
      args.block_n = t[1];
      args.context_tile = t[2];
      INFO(test::describe(base), " block_m=", t[0], " block_n=", t[1], " context_tile=", t[2]);
      const auto got = prefix_attention(args, Precision::exact).out_f64.to_f64();
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
    specs.push_back(spec);
  }
  for (const auto& spec : specs) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    DecodeArgs d;
    d.query = c.query;  // [num_seqs, num_heads, head_size]: one token per sequence
    d.key_cache = c.key_cache;
    d.value_cache = c.value_cache;
    d.kv_layout = spec.kv_layout;
    d.block_tables = c.block_tables;
    d.seq_lens = c.seq_lens;
    d.options = c.args().options;
    const auto decode = paged_attention_v1(d, Precision::exact).out_f64.to_f64();
    const auto prefix = prefix_attention(c.args(), Precision::exact).out_f64.to_f64();
    CHECK(max_abs_diff(prefix, decode) <= 1e-12 * max_abs(decode));
  }
}

TEST_CASE("exact output is the one rounding of the fp64 output") {
  for (const auto& spec : test::prefix_grid_cases()) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const PrefixOutputs o = prefix_attention(c.args(), Precision::exact);
    const auto f64 = o.out_f64.to_f64();
    const auto rounded = o.out.to_f64();
    REQUIRE(f64.size() == rounded.size());
    for (std::size_t i = 0; i < f64.size(); ++i) REQUIRE(rounded[i] == round_to_dtype(spec.dtype, f64[i]));
  }
}

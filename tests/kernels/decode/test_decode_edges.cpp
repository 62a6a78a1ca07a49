// Edge cases of decode with defined results: empty and one-token sequences, partitions past
// the end or hidden by the sliding window, NaN poison in unused slots, garbage past the block
// table's used entries, a non-default scale, structural invariances (block relabelling, cache
// layout, query strides) and thread-count determinism of V1 and the reduce, which must hold bit
// for bit.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "pao/kernels/paged_attention.hpp"
#include "pao/numerics/element.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/dense_reference.hpp"

using namespace pao;

namespace {

cases::Case edge_spec() {
  // empty, one token, mid-block, block end, one past
  cases::Case s = test::attention_case(4, 2, 32, 8, {0, 1, 13, 16, 17});
  s.max_seq_len = 40;  // partitions of 8 past every end
  s.partition_size = 8;
  s.seed = 42;
  return s;
}

bool all_finite(const Tensor& t) {
  for (double v : t.to_f64())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("an empty sequence gives out 0, max_logits -inf, exp_sums 0") {
  const cases::DecodeCase c = cases::make_decode_case(edge_spec());
  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs v1 = paged_attention_v1(c.args(), prec, c.spec);
    const DecodeOutputs v2 = paged_attention_v2(c.args(), prec, c.spec);
    for (std::int64_t h = 0; h < 4; ++h) {
      for (std::int64_t d = 0; d < 32; ++d) {
        CHECK(v1.out.at({0, h, d}) == 0.0);
        CHECK(v2.out.at({0, h, d}) == 0.0);
      }
      for (std::int64_t p = 0; p < 5; ++p) {
        CHECK(v2.max_logits.at({0, h, p}) == -std::numeric_limits<double>::infinity());
        CHECK(v2.exp_sums.at({0, h, p}) == 0.0);
      }
    }
  }
}

TEST_CASE("partitions past a sequence's end hold tmp_out 0, max_logits -inf, exp_sums 0") {
  const cases::DecodeCase c = cases::make_decode_case(edge_spec());
  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs v2 = paged_attention_v2(c.args(), prec, c.spec);
    REQUIRE(v2.max_logits.size(2) == 5);
    for (std::int64_t s = 0; s < 5; ++s) {
      const std::int64_t len = c.spec.seq_lens[static_cast<std::size_t>(s)];
      for (std::int64_t p = 0; p < 5; ++p) {
        const bool past = p * 8 >= len;
        INFO("seq ", s, " partition ", p);
        CHECK((v2.max_logits.at({s, 1, p}) == -std::numeric_limits<double>::infinity()) == past);
        CHECK((v2.exp_sums.at({s, 1, p}) == 0.0) == past);
        if (past) CHECK(v2.tmp_out.at({s, 1, p, 3}) == 0.0);
      }
    }
  }
}

TEST_CASE("a one-token sequence returns its value row") {
  const cases::DecodeCase c = cases::make_decode_case(edge_spec());
  const DecodeOutputs o = paged_attention_v1(c.args(), Precision::exact, c.spec);
  const std::int64_t block = static_cast<std::int64_t>(c.block_tables.at({1, 0}));
  for (std::int64_t h = 0; h < 4; ++h)
    for (std::int64_t d = 0; d < 32; ++d)
      CHECK(o.out.at({1, h, d}) == c.value_cache.at({block, h / 2, d, 0}));
}

TEST_CASE("NaN poison in unused slots and block tails never reaches the output") {
  for (const auto& spec : test::all_decode_cases()) {
    INFO(test::describe(spec));
    const cases::DecodeCase poisoned = cases::make_decode_case(spec);
    cases::Case clean_spec = spec;
    clean_spec.poison_unused = false;
    const cases::DecodeCase clean = cases::make_decode_case(clean_spec);
    for (Precision prec : {Precision::exact, Precision::kernel}) {
      const DecodeOutputs a = paged_attention_v2(poisoned.args(), prec, poisoned.spec);
      const DecodeOutputs b = paged_attention_v2(clean.args(), prec, clean.spec);
      CHECK(all_finite(a.out));
      CHECK(test::bitwise_equal(a.out, b.out));
      CHECK(test::bitwise_equal(a.tmp_out, b.tmp_out));
      CHECK(test::bitwise_equal(a.max_logits, b.max_logits));
      CHECK(test::bitwise_equal(a.exp_sums, b.exp_sums));
      const DecodeOutputs a1 = paged_attention_v1(poisoned.args(), prec, poisoned.spec);
      const DecodeOutputs b1 = paged_attention_v1(clean.args(), prec, clean.spec);
      CHECK(all_finite(a1.out));
      CHECK(test::bitwise_equal(a1.out, b1.out));
      if (prec == Precision::exact) {
        CHECK(all_finite(a.out_f64));
        CHECK(all_finite(a1.out_f64));
        CHECK(test::bitwise_equal(a.out_f64, b.out_f64));
        CHECK(test::bitwise_equal(a1.out_f64, b1.out_f64));
      }
    }
  }
}

TEST_CASE("relabelling physical blocks, the NHD and HND layouts and strided queries change nothing") {
  cases::Case spec = edge_spec();
  spec.seq_lens = {3, 29, 40, 8, 0};
  const cases::DecodeCase c = cases::make_decode_case(spec);

  // Reverse the pool: block b moves to num_blocks - 1 - b.
  const std::int64_t nb = c.key_cache.size(0);
  cases::DecodeCase moved = cases::make_decode_case(spec);
  const std::size_t kblock = c.key_cache.nbytes() / static_cast<std::size_t>(nb);
  const std::size_t vblock = c.value_cache.nbytes() / static_cast<std::size_t>(nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    std::memcpy(moved.key_cache.bytes() + (nb - 1 - b) * kblock, c.key_cache.bytes() + b * kblock, kblock);
    std::memcpy(moved.value_cache.bytes() + (nb - 1 - b) * vblock, c.value_cache.bytes() + b * vblock,
                vblock);
  }
  for (std::int64_t s = 0; s < 5; ++s)
    for (std::int64_t b = 0; b < moved.block_tables.size(1); ++b) {
      const std::int32_t id = static_cast<std::int32_t>(c.block_tables.at({s, b}));
      if (id >= 0 && id < nb) moved.block_tables.set({s, b}, static_cast<double>(nb - 1 - id));
    }

  cases::Case nhd_spec = spec;
  nhd_spec.kv_layout = KVLayout::nhd;
  const cases::DecodeCase nhd = cases::make_decode_case(nhd_spec);  // same seed: same logical values
  cases::Case hnd_spec = spec;
  hnd_spec.kv_layout = KVLayout::hnd;
  const cases::DecodeCase hnd = cases::make_decode_case(hnd_spec);
  // HND really is [num_blocks, num_kv_heads, block_size, head_size]: element (b, h, t, d) of the
  // HND key cache is element (b, t, h, d) of the NHD one.
  REQUIRE(hnd.key_cache.shape() == Shape{nhd.key_cache.size(0), 2, 8, 32});
  for (std::int64_t b = 0; b < nhd.key_cache.size(0); ++b)
    for (std::int64_t t = 0; t < 8; t += 3)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t d = 0; d < 32; d += 7) {
          const double want = nhd.key_cache.at({b, t, h, d}), got = hnd.key_cache.at({b, h, t, d});
          if (!(std::isnan(want) && std::isnan(got))) CHECK(got == want);
        }

  // The query as a strided view: every other head slot of a wider buffer.
  Tensor wide(spec.dtype, {5, 8, 32});
  for (std::int64_t s = 0; s < 5; ++s)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t d = 0; d < 32; ++d) wide.set({s, 2 * h + 1, d}, c.query.at({s, h, d}));
  DecodeArgs strided = c.args();
  strided.query =
      TensorView(wide.bytes() + 32 * dtype_size(spec.dtype), spec.dtype, {5, 4, 32}, {256, 64, 1});

  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs ref = paged_attention_v2(c.args(), prec, c.spec);
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(moved.args(), prec, moved.spec).out));
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(nhd.args(), prec, nhd.spec).out));
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(hnd.args(), prec, hnd.spec).out));
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(strided, prec, c.spec).out));
  }
}

TEST_CASE("a partition hidden by the sliding window holds tmp_out 0, max_logits -inf, exp_sums 0") {
  // 40 tokens in partitions of 8; the query (position 39) sees tokens 39 - window + 1 .. 39.
  // Window 5: partitions 0-3 are hidden entirely, partition 4 partly. Window 12: partitions 0-2
  // hidden, partition 3 partly (tokens 28-31 of 24-31). Window 8: partitions 0-3 hidden,
  // partition 4 (tokens 32-39) exactly.
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  for (const std::int32_t window : {5, 12, 8}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      // the short sequence: its one partition is fully visible
      cases::Case spec = test::attention_case(4, 2, 32, 8, {40, 3});
      spec.partition_size = 8;
      spec.sliding_window = window;
      spec.alibi = window == 12;
      spec.dtype = dtype;
      spec.distribution = cases::ValueDistribution::large_logits;
      spec.seed = 60 + static_cast<std::uint64_t>(window);
      const cases::DecodeCase c = cases::make_decode_case(spec);
      const std::int64_t first_visible = 40 - window;
      for (Precision prec : {Precision::exact, Precision::kernel}) {
        INFO(test::describe(spec), " exact=", prec == Precision::exact);
        const DecodeOutputs v2 = paged_attention_v2(c.args(), prec, c.spec);
        REQUIRE(v2.max_logits.size(2) == 5);
        std::int64_t hidden = 0;
        for (std::int64_t p = 0; p < 5; ++p) {
          const bool is_hidden = (p + 1) * 8 <= first_visible;
          hidden += is_hidden;
          for (std::int64_t h = 0; h < 4; ++h) {
            INFO("partition ", p, " head ", h);
            CHECK((v2.max_logits.at({0, h, p}) == kNegInf) == is_hidden);
            CHECK((v2.exp_sums.at({0, h, p}) == 0.0) == is_hidden);
            if (!is_hidden) {
              CHECK(std::isfinite(v2.max_logits.at({0, h, p})));
              CHECK(v2.exp_sums.at({0, h, p}) >= 1.0);  // the max token contributes exp(0)
            }
            for (std::int64_t d = 0; d < 32; ++d) {
              const double v = v2.tmp_out.at({0, h, p, d});
              if (is_hidden)
                CHECK(v == 0.0);
              else
                CHECK(std::isfinite(v));
            }
          }
        }
        CHECK(hidden == first_visible / 8);
        CHECK(all_finite(v2.out));
        // The hidden partitions drop out of the reduce: exact V2 equals V1 and the dense
        // reference.
        if (prec == Precision::exact) {
          const auto a = v2.out_f64.to_f64(), b = paged_attention_v1(c.args(), prec, c.spec).out_f64.to_f64();
          CHECK(test::max_abs_diff(a, b) <= 1e-12 * std::max(1.0, test::max_abs(b)));
          CHECK(test::max_abs_diff(b, test::dense_decode_reference(c)) <=
                1e-12 * std::max(1.0, test::max_abs(b)));
        }
      }
    }
  }
}

TEST_CASE("a non-default scale multiplies q.k: exact precision equals the dense reference") {
  // scale 0.3 against the default 1/sqrt(64) = 0.125; alone, then under soft-cap and ALiBi
  // (the scale applies before both) and with an fp8 cache.
  for (int variant = 0; variant < 3; ++variant) {
    cases::Case spec = test::attention_case(4, 2, 64, 16, {1, 37, 90});
    spec.partition_size = 32;
    spec.distribution = cases::ValueDistribution::large_logits;
    spec.scale = 0.3f;
    if (variant == 1) {
      spec.soft_cap = 8.0f;
      spec.alibi = true;
      spec.dtype = DType::bf16;
    }
    if (variant == 2) {
      spec.kv_cache_dtype = DType::fp8_e4m3;
      spec.k_scale = 0.5f;
      spec.v_scale = 0.25f;
    }
    spec.seed = 80 + static_cast<std::uint64_t>(variant);
    INFO(test::describe(spec), " scale=0.3");
    const cases::DecodeCase c = cases::make_decode_case(spec);
    const auto ref = test::dense_decode_reference(c);
    const double tol = 1e-12 * std::max(1.0, test::max_abs(ref));
    const auto v1 = paged_attention_v1(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    const auto v2 = paged_attention_v2(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    CHECK(test::max_abs_diff(v1, ref) <= tol);
    CHECK(test::max_abs_diff(v2, ref) <= tol);
    // The scale is not a no-op: the default one gives a clearly different output.
    cases::Case plain = spec;
    plain.scale.reset();
    CHECK(test::max_abs_diff(test::dense_decode_reference(cases::make_decode_case(plain)), ref) > 1e-3);
  }
}

TEST_CASE("V1 and the standalone reduce are bit-identical for 1, 2 and 3 threads") {
  // Several sequences and heads, so that the dynamic schedules hand work to every thread in
  // different orders; threads keep per-thread scratch between work items.
  const auto cases = test::feature_cases();
  for (std::size_t i = 1; i < cases.size(); i += 3) {
    cases::Case spec = cases[i];
    spec.num_seqs = 6;
    spec.seq_lens = {100, 0, 33, 71, 1, 64};
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    // Reduce inputs: V2's own partials, computed once (single-threaded).
    omp_set_num_threads(1);
    const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::kernel, c.spec);
    const ReduceArgs r{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
    std::vector<DecodeOutputs> runs;  // per thread count: v1 kernel, v1 exact, reduce kernel, reduce exact
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      runs.push_back(paged_attention_v1(c.args(), Precision::kernel, c.spec));
      runs.push_back(paged_attention_v1(c.args(), Precision::exact, c.spec));
      runs.push_back(paged_attention_v2_reduce(r, Precision::kernel, c.spec));
      runs.push_back(paged_attention_v2_reduce(r, Precision::exact, c.spec));
    }
    omp_set_num_threads(2);
    for (std::size_t k = 4; k < runs.size(); ++k) {
      INFO("run ", k % 4, " threads ", 1 + k / 4);
      const DecodeOutputs& a = runs[k % 4];
      const DecodeOutputs& b = runs[k];
      CHECK(test::bitwise_equal(a.out, b.out));
      if (k % 2 == 1) CHECK(test::bitwise_equal(a.out_f64, b.out_f64));
    }
    CHECK(test::bitwise_equal(runs[2].out, v2.out));
  }
}

// Edge cases of decode with defined results: empty and one-token sequences, partitions past
// the end, NaN poison in unused slots, garbage past the block table's used entries, and
// structural invariances (block relabelling, cache layout, query strides) that must hold bit for
// bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "pao/element.hpp"
#include "pao/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"

using namespace pao;

namespace {

DecodeCaseSpec edge_spec() {
  DecodeCaseSpec s;
  s.num_seqs = 5;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_size = 32;
  s.block_size = 8;
  s.seq_lens = {0, 1, 13, 16, 17};  // empty, one token, mid-block, block end, one past
  s.max_seq_len = 40;                // partitions of 8 past every end
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
  const DecodeCase c = make_decode_case(edge_spec());
  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs v1 = paged_attention_v1(c.args(), prec);
    const DecodeOutputs v2 = paged_attention_v2(c.args(), prec);
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
  const DecodeCase c = make_decode_case(edge_spec());
  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs v2 = paged_attention_v2(c.args(), prec);
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
  const DecodeCase c = make_decode_case(edge_spec());
  const DecodeOutputs o = paged_attention_v1(c.args(), Precision::exact);
  const std::int64_t block = static_cast<std::int64_t>(c.block_tables.at({1, 0}));
  for (std::int64_t h = 0; h < 4; ++h)
    for (std::int64_t d = 0; d < 32; ++d) CHECK(o.out.at({1, h, d}) == c.value_cache.at({block, h / 2, d, 0}));
}

TEST_CASE("NaN poison in unused slots and block tails never reaches the output") {
  for (const auto& spec : test::all_decode_cases()) {
    INFO(test::describe(spec));
    const DecodeCase poisoned = make_decode_case(spec);
    DecodeCaseSpec clean_spec = spec;
    clean_spec.poison_unused = false;
    const DecodeCase clean = make_decode_case(clean_spec);
    for (Precision prec : {Precision::exact, Precision::kernel}) {
      const DecodeOutputs a = paged_attention_v2(poisoned.args(), prec);
      const DecodeOutputs b = paged_attention_v2(clean.args(), prec);
      CHECK(all_finite(a.out));
      CHECK(test::bitwise_equal(a.out, b.out));
      CHECK(test::bitwise_equal(a.tmp_out, b.tmp_out));
    }
  }
}

TEST_CASE("relabelling physical blocks, the NHD layout and strided queries change nothing") {
  DecodeCaseSpec spec = edge_spec();
  spec.seq_lens = {3, 29, 40, 8, 0};
  const DecodeCase c = make_decode_case(spec);

  // Reverse the pool: block b moves to num_blocks - 1 - b.
  const std::int64_t nb = c.key_cache.size(0);
  DecodeCase moved = make_decode_case(spec);
  const std::size_t kblock = c.key_cache.nbytes() / static_cast<std::size_t>(nb);
  const std::size_t vblock = c.value_cache.nbytes() / static_cast<std::size_t>(nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    std::memcpy(moved.key_cache.bytes() + (nb - 1 - b) * kblock, c.key_cache.bytes() + b * kblock, kblock);
    std::memcpy(moved.value_cache.bytes() + (nb - 1 - b) * vblock, c.value_cache.bytes() + b * vblock, vblock);
  }
  for (std::int64_t s = 0; s < 5; ++s)
    for (std::int64_t b = 0; b < moved.block_tables.size(1); ++b) {
      const std::int32_t id = static_cast<std::int32_t>(c.block_tables.at({s, b}));
      if (id >= 0 && id < nb) moved.block_tables.set({s, b}, static_cast<double>(nb - 1 - id));
    }

  DecodeCaseSpec nhd_spec = spec;
  nhd_spec.kv_layout = KVLayout::nhd;
  const DecodeCase nhd = make_decode_case(nhd_spec);  // same seed: same logical values

  // The query as a strided view: every other head slot of a wider buffer.
  Tensor wide(spec.dtype, {5, 8, 32});
  for (std::int64_t s = 0; s < 5; ++s)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t d = 0; d < 32; ++d) wide.set({s, 2 * h + 1, d}, c.query.at({s, h, d}));
  DecodeArgs strided = c.args();
  strided.query = TensorView(wide.bytes() + 32 * dtype_size(spec.dtype), spec.dtype, {5, 4, 32}, {256, 64, 1});

  for (Precision prec : {Precision::exact, Precision::kernel}) {
    const DecodeOutputs ref = paged_attention_v2(c.args(), prec);
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(moved.args(), prec).out));
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(nhd.args(), prec).out));
    CHECK(test::bitwise_equal(ref.out, paged_attention_v2(strided, prec).out));
  }
}

// Structural causes (pao/diff/structure.hpp): a failing set laid on the rows a predicate selects
// is named by it; a set that matches no predicate, or one that selects every row, is not; NaN
// rows are `unused-slots` only when whole rows of partly filled sequences are NaN in a poisoned
// golden. Across cases, the dtype path the failing cases share.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "pao/cases/case.hpp"
#include "pao/diff/diff.hpp"
#include "pao/diff/pattern.hpp"
#include "pao/golden/tensors.hpp"

using namespace pao;
using namespace pao::diff;

namespace {

/// What an element of the failing output holds: its error (0: it passes), or NaN / -Inf.
using ErrorOf = std::function<double(const Coords&)>;

struct Planted {
  CaseGeometry geometry;
  Tallies tallies;
  Verdict verdict;
};

Planted plant(const char* json, const ErrorOf& error_of) {
  const cases::Case c = cases::parse_case(json, "structure");
  const golden::GoldenTensors g = golden::make_golden(c);
  const CaseGeometry geo =
      CaseGeometry::make(c, *g.find("block_tables"), *g.find("seq_lens"), g.find("query_start_loc"));
  const bool prefix = c.kernel == cases::CaseKernel::prefix;
  const OutputLayout layout = prefix ? OutputLayout::token_head_dim : OutputLayout::seq_head_dim;
  const Shape shape = {prefix ? c.num_tokens() : c.num_seqs, c.num_heads, c.head_size};
  Tallies t(geo, layout);
  for (std::int64_t flat = 0; flat < shape[0] * shape[1] * shape[2]; ++flat) {
    const Coords co = coords_of(geo, layout, shape, flat);
    const double e = error_of(co);
    const bool nonfinite = !std::isfinite(e);
    t.add(co, e != 0, nonfinite, std::isnan(e), nonfinite ? 0.0 : e);
  }
  Verdict v = classify(geo, layout, t);
  return {geo, std::move(t), std::move(v)};
}

// Sequences of 1, 17, 32 and 300 tokens, block 16, partition 128: one-token {0}, mid-block
// {0, 1, 3}, on a block boundary {2}, 2+ partitions {3}. 8 query heads on 2 KV heads.
const char* kDecode =
    R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 32, "block_size": 16, "dtype": "f16",
                          "partition_size": 128, "seq_lens": [1, 17, 32, 300]})";

ErrorOf seqs(std::initializer_list<int> which, double error = 0.1) {
  const std::vector<int> w(which);
  return
      [w, error](const Coords& c) { return std::find(w.begin(), w.end(), c.seq) != w.end() ? error : 0.0; };
}

}  // namespace

TEST_CASE("the failing sequences are named by the structure they share") {
  struct Row {
    std::initializer_list<int> failing;
    Pattern pattern;
    const char* says;
  };
  for (const Row& row : {Row{{3}, Pattern::multi_partition, "2+ V2 partitions"},
                         Row{{0}, Pattern::first_token, "one-token sequences"},
                         Row{{0, 1, 3}, Pattern::partial_block, "last block is partly filled"},
                         Row{{2}, Pattern::block_boundary, "exactly on a block boundary"}}) {
    const Planted p = plant(kDecode, seqs(row.failing));
    INFO(p.verdict.detail);
    CHECK(p.verdict.pattern == row.pattern);
    CHECK(p.verdict.detail.find(row.says) != std::string::npos);
    CHECK(p.verdict.detail.find("are exactly") != std::string::npos);
  }
  // Sequences 1 and 2 share no predicate: the location pattern says what it can.
  const Planted none = plant(kDecode, seqs({1, 2}));
  CHECK(none.verdict.pattern == Pattern::whole_sequence);
}

TEST_CASE("a predicate that selects every sequence names nothing") {
  // Both sequences end mid-block: 'partly filled last block' is every sequence, no cause.
  const Planted p = plant(R"({"num_heads": 2, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
                              "seq_lens": [17, 33]})",
                          seqs({0, 1}));
  CHECK(p.verdict.pattern == Pattern::scattered);
}

TEST_CASE("window-edge: exactly the sequences longer than the window") {
  const char* windowed = R"({"num_heads": 2, "num_kv_heads": 1, "head_size": 32, "dtype": "f16",
                             "sliding_window": 20, "seq_lens": [10, 30, 50, 7]})";
  const Planted p = plant(windowed, seqs({1, 2}));
  CHECK(p.verdict.pattern == Pattern::window_edge);
  CHECK(p.verdict.detail.find("longer than the sliding window (20 tokens)") != std::string::npos);
}

TEST_CASE("long-sequences: a length threshold with the error growing, not a flat one") {
  // One partition each (partition 1024), every sequence mid-block: only length tells them apart.
  const char* lengths = R"({"num_heads": 2, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
                            "partition_size": 1024, "seq_lens": [100, 200, 410, 810]})";
  const Planted growing = plant(lengths, [](const Coords& c) {
    return c.seq == 2 ? 0.01 : c.seq == 3 ? 0.05 : 0.0;
  });
  INFO(growing.verdict.detail);
  CHECK(growing.verdict.pattern == Pattern::long_sequences);
  CHECK(growing.verdict.detail.find("410 tokens or more") != std::string::npos);
  const Planted flat = plant(lengths, [](const Coords& c) { return c.seq >= 2 ? 0.05 : 0.0; });
  CHECK(flat.verdict.pattern == Pattern::whole_sequence);
}

TEST_CASE("heads: the modulo head mapping and whole KV groups") {
  // 8 heads on 2 KV heads (groups of 4): head % 2 != head / 4 for heads 1, 3, 4, 6.
  const Planted mapping = plant(kDecode, [](const Coords& c) {
    return c.head == 1 || c.head == 3 || c.head == 4 || c.head == 6 ? 0.1 : 0.0;
  });
  CHECK(mapping.verdict.pattern == Pattern::kv_head_mapping);
  CHECK(mapping.verdict.detail.find("heads 1, 3, 4, 6") != std::string::npos);
  const Planted group = plant(kDecode, [](const Coords& c) { return c.head >= 4 ? 0.1 : 0.0; });
  CHECK(group.verdict.pattern == Pattern::kv_group);
  CHECK(group.verdict.detail.find("KV head 1") != std::string::npos);
  // Heads 1 and 2 share neither a group nor the modulo set: whole heads, no cause.
  const Planted other =
      plant(kDecode, [](const Coords& c) { return c.head == 1 || c.head == 2 ? 0.1 : 0.0; });
  CHECK(other.verdict.pattern == Pattern::whole_head);
}

TEST_CASE("unused-slots: whole NaN rows of partly filled sequences in a poisoned golden, nothing less") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Planted rows = plant(kDecode, [&](const Coords& c) { return c.seq != 2 ? nan : 0.0; });
  CHECK(rows.verdict.pattern == Pattern::unused_slots);
  CHECK(rows.verdict.detail.find("seqs 0, 1, 3: every one of the 3") != std::string::npos);
  // Two of the three: rather a wrong block read (a poisoned spare block) than slots past seq_len.
  const Planted some = plant(kDecode, [&](const Coords& c) { return c.seq == 1 || c.seq == 3 ? nan : 0.0; });
  CHECK(some.verdict.pattern == Pattern::nan_inf);
  CHECK(rows.verdict.detail.find("\"poison_unused\": false") != std::string::npos);
  // One NaN element, a sequence ending on a block boundary, -Inf (an empty softmax), no poison.
  const Planted one =
      plant(kDecode, [&](const Coords& c) { return c.seq == 1 && c.head == 0 && c.dim == 3 ? nan : 0.0; });
  CHECK(one.verdict.pattern == Pattern::nan_inf);
  const Planted boundary = plant(kDecode, [&](const Coords& c) { return c.seq == 2 ? nan : 0.0; });
  CHECK(boundary.verdict.pattern == Pattern::nan_inf);
  // Every sequence NaN, the one ending on a block boundary too (Flex's eager path): the whole pool.
  const Planted pool = plant(kDecode, [&](const Coords&) { return nan; });
  CHECK(pool.verdict.pattern == Pattern::unused_slots);
  CHECK(pool.verdict.detail.find("blocks no sequence owns") != std::string::npos);
  const Planted inf = plant(
      kDecode, [](const Coords& c) { return c.seq == 1 ? -std::numeric_limits<double>::infinity() : 0.0; });
  CHECK(inf.verdict.pattern == Pattern::nan_inf);
  const Planted clean_golden = plant(R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
                                         "seq_lens": [1, 17, 32, 300], "poison_unused": false})",
                                     [&](const Coords& c) { return c.seq == 1 ? nan : 0.0; });
  CHECK(clean_golden.verdict.pattern == Pattern::nan_inf);
}

TEST_CASE("empty-sequence: NaN (or anything but 0) exactly in the empty sequences") {
  // IPEX 2.8's defect of docs/vendor-guide.md: NaN in every element of a length-0 sequence.
  const char* lens = R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
                         "seq_lens": [0, 5, 33]})";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Planted p = plant(lens, [&](const Coords& c) { return c.seq == 0 ? nan : 0.0; });
  CHECK(p.verdict.pattern == Pattern::empty_sequence);
  CHECK(p.verdict.detail.find("seq 0: 1 of 3, NaN/Inf") != std::string::npos);
  CHECK(plant(lens, seqs({0})).verdict.pattern == Pattern::empty_sequence);
  CHECK(plant(lens, seqs({0, 1})).verdict.pattern != Pattern::empty_sequence);
}

TEST_CASE("prefix: each sequence's last, all-but-last and first new tokens, and the window's edge") {
  // New tokens: seq 0 tokens 0..4 (positions 35..39), seq 1 tokens 5..24 (0..19), seq 2 token 25 (64).
  const char* prefix = R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 32,
                           "block_size": 16, "dtype": "f16", "sliding_window": 24,
                           "query_lens": [5, 20, 1], "seq_lens": [40, 20, 65]})";
  const auto tokens = [](std::function<bool(std::int32_t)> f) {
    return [f](const Coords& c) { return f(c.token) ? 0.1 : 0.0; };
  };
  const Planted last = plant(prefix, tokens([](std::int32_t t) { return t == 4 || t == 24 || t == 25; }));
  CHECK(last.verdict.pattern == Pattern::last_token);
  const Planted causal = plant(prefix, tokens([](std::int32_t t) { return t != 4 && t != 24 && t != 25; }));
  CHECK(causal.verdict.pattern == Pattern::causal_mask);
  const Planted first = plant(prefix, tokens([](std::int32_t t) { return t == 0 || t == 5 || t == 25; }));
  CHECK(first.verdict.pattern == Pattern::first_token);
  // Positions >= 24: seq 0's tokens (35..39) and seq 2's (64); seq 1's end at position 19.
  const Planted edge = plant(prefix, tokens([](std::int32_t t) { return t <= 4 || t == 25; }));
  CHECK(edge.verdict.pattern == Pattern::window_edge);
  // Two of the three last tokens (the third's error below the bound): all lie among them.
  const Planted within = plant(prefix, tokens([](std::int32_t t) { return t == 4 || t == 24; }));
  CHECK(within.verdict.pattern == Pattern::last_token);
  CHECK(within.verdict.detail.find("all lie among") != std::string::npos);
}

TEST_CASE("dtype path: the failing cases are exactly those of one cache format or dtype") {
  const auto report = [](const std::string& path, bool passed) {
    CaseReport r;
    r.case_id = path;
    r.dtype_path = path;
    TensorReport t;
    t.passed = passed;
    r.tensors.push_back(t);
    return r;
  };
  const std::string fp8 =
      dtype_path_cause({report("f16", true), report("f16 with an fp8_e4m3 cache", false),
                        report("bf16", true), report("bf16 with an fp8_e4m3 cache", false)});
  CHECK(fp8 ==
        "only the cases with an fp8_e4m3 cache fail (2 of 2; the 2 others pass): the dequantisation of "
        "the cache");
  const std::string bf16 = dtype_path_cause(
      {report("f16", true), report("bf16", false), report("bf16 with an fp8_e4m3 cache", false)});
  CHECK(bf16.starts_with("only the bf16 cases fail (2 of 2; the 1 other passes)"));
  CHECK(dtype_path_cause(
            {report("f16", false), report("bf16", true), report("bf16 with an fp8_e4m3 cache", false)})
            .empty());
  CHECK(dtype_path_cause({report("f16", false), report("bf16", false)}).empty());  // every case fails
}

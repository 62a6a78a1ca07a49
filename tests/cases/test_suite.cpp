// Suites: the pairwise cover covers every allowed pair, exclusions hold, ids are stable (the
// smoke suite's are pinned here), shards split a suite exactly, and every shipped suite expands.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "pao/cases/pairwise.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"

using namespace pao;
using namespace pao::cases;

namespace {

const std::filesystem::path kCasesDir = pao::data_dir() / "cases";

std::vector<std::string> ids(const std::vector<cases::Case>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.id);
  return out;
}

}  // namespace

TEST_CASE("the greedy pairwise cover covers every allowed pair, deterministically") {
  const std::vector<std::size_t> sizes = {3, 4, 2, 5, 2};
  // Forbid axis0 = 2 together with axis3 = 4.
  auto allowed = [](const GridRow& r) { return !(r[0] == 2 && r[3] == 4); };
  const auto rows = grid_product(sizes, allowed);
  CHECK(rows.size() == 3 * 4 * 2 * 5 * 2 - 4 * 2 * 2);
  const auto cover = pairwise_cover(sizes, rows);
  CHECK(cover == pairwise_cover(sizes, rows));
  CHECK(cover.size() < rows.size() / 4);
  CHECK(cover.size() >= 4 * 5);  // the two largest axes alone need 20 rows
  std::set<std::vector<std::size_t>> needed, covered;
  for (const auto* list : {&rows, &cover})
    for (const auto& r : *list)
      for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j)
          (list == &rows ? needed : covered).insert({i, r[i], j, r[j]});
  CHECK(covered == needed);
  for (const auto& r : cover) CHECK(allowed(r));
}

TEST_CASE("suite grids: fixed fields, object-valued axes and exclusions") {
  const char* suite = R"({
    "suite": "t", "grids": [{
      "fixed": {"num_seqs": 2, "max_seq_len": 40, "dtype": "f16"},
      "axes": {"heads": [{"num_heads": 4, "num_kv_heads": 4}, {"num_heads": 8, "num_kv_heads": 2}],
               "head_size": [64, 80], "kv_cache_dtype": ["auto", "fp8_e4m3"]},
      "exclude": [{"kv_cache_dtype": ["fp8_e4m3"], "head_size": [80]}]}]})";
  const auto full = expand_suite_text(suite, "t.json", true);
  CHECK(full.size() == 2 * 2 * 2 - 2);
  for (const auto& c : full) CHECK_FALSE((c.head_size == 80 && c.kv_cache_dtype.has_value()));
  CHECK(full.front().id == "decode-h4x4-d64-b16-f16-auto-n2-L40-s0");
  const auto pairwise = expand_suite_text(suite, "t.json", false);
  CHECK(pairwise.size() <= full.size());

  auto error_of = [](const std::string& text) {
    try {
      expand_suite_text(text, "t.json", false);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of(R"({"grids": [{"fixed": {"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3]},
                                "axes": {"dtype": ["f16"]}}]})")
            .find("axis 'dtype' also appears in 'fixed'") != std::string::npos);
  CHECK(error_of(R"({"grids": [{"fixed": {"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3]}},
                               {"fixed": {"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3]}}]})")
            .find("two cases share the id") != std::string::npos);
  CHECK(
      error_of(R"({"grids": [{"fixed": {"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_len": [3]}}]})")
          .find("unknown field 'seq_len'") != std::string::npos);
  CHECK(error_of(R"({"grid": []})").find("unknown key 'grid'") != std::string::npos);
  CHECK(error_of(R"({"grids": [{"fixed": {"soft_cap": -1e999}}]})").find("invalid JSON") !=
        std::string::npos);
}

TEST_CASE("the smoke suite's ids are stable") {
  // Pinned: changing an id breaks users' manifests and CI baselines. Update deliberately.
  const std::vector<std::string> expected = {
      "decode-h4x4-d64-b16-f16-auto-p128-n3-L300-s0",
      "decode-h4x4-d64-b16-f32-auto-p128-n3-L300-s0",
      "decode-h4x4-d64-b32-f16-e4m3-alibi-p128-n3-L300-s0",
      "decode-h4x4-d128-b16-bf16-auto-p128-n3-L300-s0",
      "decode-h4x4-d128-b32-bf16-e4m3-alibi-p128-w64-n3-L300-s0",
      "decode-h8x2-d64-b16-bf16-e4m3-p128-n3-L300-s0",
      "decode-h8x2-d64-b16-f32-auto-alibi-p128-w64-n3-L300-s0",
      "decode-h8x2-d128-b32-f16-auto-p128-w64-n3-L300-s0",
      "decode-h8x2-d128-b32-f32-e4m3-p128-n3-L300-s0",
      "prefix-h4x2-d64-b16-f16-auto-q5.20.1-l40.20.65-s0",
      "prefix-h4x2-d64-b16-f16-e5m2-win16-q5.20.1-l40.20.65-s0",
      "prefix-h4x2-d64-b16-bf16-auto-win16-q5.20.1-l40.20.65-s0",
      "prefix-h4x2-d64-b16-bf16-e5m2-q5.20.1-l40.20.65-s0",
      // The adversarial grids (issue 13: pao audit catches every bug class in every dtype).
      "decode-h8x2-d64-b16-f32-auto-alibi-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-f32-auto-win200-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-f16-auto-alibi-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-f16-auto-win200-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-bf16-auto-alibi-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-bf16-auto-win200-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-f16-e4m3-alibi-ks0.5-vs0.25-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-f16-e4m3-win200-ks0.5-vs0.25-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-bf16-e5m2-alibi-ks2-vs0.5-p128-large_logits-l1.17.300-s5",
      "decode-h8x2-d64-b16-bf16-e5m2-win200-ks2-vs0.5-p128-large_logits-l1.17.300-s5",
      "prefix-h8x2-d64-b16-f32-auto-alibi-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-f32-auto-win24-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-f16-auto-alibi-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-f16-auto-win24-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-bf16-auto-alibi-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-bf16-auto-win24-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-f16-e4m3-alibi-ks0.5-vs0.25-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-f16-e4m3-win24-ks0.5-vs0.25-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-bf16-e5m2-alibi-ks2-vs0.5-large_logits-q5.20.1-l40.20.65-s5",
      "prefix-h8x2-d64-b16-bf16-e5m2-win24-ks2-vs0.5-large_logits-q5.20.1-l40.20.65-s5",
  };
  const auto cases = expand_suite(find_suite("smoke", kCasesDir), false);
  CHECK(ids(cases) == expected);
  CHECK(ids(expand_suite(find_suite("smoke", kCasesDir), false)) == expected);
}

TEST_CASE("every shipped suite expands, pairwise and full") {
  const auto suites = list_suites(kCasesDir);
  std::set<std::string> names;
  for (const auto& s : suites) names.insert(s.name);
  for (const char* required : {"smoke", "vllm", "long-context", "fp8"}) CHECK(names.count(required) == 1);
  for (const auto& s : suites) {
    INFO(s.name);
    const auto pairwise = expand_suite(s.path, false);
    const auto full = expand_suite(s.path, true);
    CHECK(!pairwise.empty());
    CHECK(pairwise.size() <= full.size());
    std::set<std::string> full_ids;
    for (const auto& c : full) full_ids.insert(c.id);
    for (const auto& c : pairwise) CHECK(full_ids.count(c.id) == 1);
  }
  const auto vllm = expand_suite(find_suite("vllm", kCasesDir), true);
  for (const auto& c : vllm) CHECK_FALSE((c.kv_cache_dtype.has_value() && c.head_size % 16 != 0));
  const auto lc = expand_suite(find_suite("long-context", kCasesDir), true);
  CHECK(lc.size() == 80);
  CHECK(std::any_of(lc.begin(), lc.end(), [](const cases::Case& c) { return c.max_seq_len == 131072; }));
}

TEST_CASE("shards split a suite exactly and deterministically") {
  const auto cases = expand_suite(find_suite("smoke", kCasesDir), true);
  std::vector<std::string> joined;
  for (std::int32_t i = 0; i < 3; ++i) {
    const auto part = select_shard(cases, parse_shard(std::to_string(i) + "/3"));
    CHECK(part.size() >= cases.size() / 3);
    for (const auto& c : part) joined.push_back(c.id);
  }
  auto all = ids(cases);
  std::sort(all.begin(), all.end());
  std::sort(joined.begin(), joined.end());
  CHECK(joined == all);
  for (const char* bad : {"3/3", "-1/3", "1/0", "1", "a/b", "1/3x"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), Error);
  }
  CHECK_THROWS_WITH_AS(find_suite("nope", kCasesDir), doctest::Contains("known suites:"), Error);
}

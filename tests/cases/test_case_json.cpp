// Case JSON: vLLM's defaults, seeded lengths, derived ids, canonical round trips, and an error
// that names the field for every kind of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "pao/cases/case.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"

using namespace pao;
using namespace pao::cases;

namespace {

/// The message of the pao::Error that parsing `json` throws ("" if it parses).
std::string parse_error(const std::string& json) {
  try {
    parse_case(json, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* kMinimal = R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3, 17]})";

}  // namespace

TEST_CASE("a minimal case takes vLLM's defaults") {
  const Case c = parse_case(kMinimal, "t.json");
  CHECK(c.kernel == CaseKernel::decode);
  CHECK(c.num_seqs == 2);
  CHECK(c.num_kv_heads == 4);
  CHECK(c.block_size == 16);
  CHECK(c.partition_size == 512);
  CHECK(c.k_scale == 1.0);
  CHECK(c.v_scale == 1.0);
  CHECK_FALSE(c.scale.has_value());
  CHECK(effective_scale(c) == static_cast<float>(1.0 / 8.0));
  CHECK_FALSE(c.alibi);
  CHECK(c.soft_cap == 0.0);
  CHECK(c.sliding_window == 0);
  CHECK_FALSE(c.kv_cache_dtype.has_value());
  CHECK(c.cache_storage_dtype() == DType::f16);
  CHECK(c.max_seq_len == 17);
  CHECK(c.warp_size == 32);
  CHECK(c.distribution == cases::ValueDistribution::uniform);
  CHECK(c.id == "decode-h4x4-d64-b16-f16-auto-l3.17-s0");
}

TEST_CASE("ids name every non-default parameter") {
  const Case c = parse_case(R"({"num_seqs": 7, "num_heads": 40, "num_kv_heads": 40, "head_size": 128,
      "block_size": 16, "dtype": "f16", "alibi": true, "max_seq_len": 2048, "seed": 0})",
                            "t.json");
  CHECK(c.id == "decode-h40x40-d128-b16-f16-auto-alibi-n7-L2048-s0");
  const Case d = parse_case(R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16",
      "kv_cache_dtype": "fp8", "k_scale": 0.5, "v_scale": 0.25, "partition_size": 1024, "warp_size": 64,
      "soft_cap": 30, "sliding_window": 100, "distribution": "near_ties", "kv_layout": "nhd",
      "seq_lens": [5], "seed": 3})",
                            "t.json");
  CHECK(d.id == "decode-h8x2-d128-b16-bf16-e4m3-nhd-cap30-win100-ks0.5-vs0.25-p1024-w64-near_ties-l5-s3");
  const Case p = parse_case(R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f16",
      "query_lens": [5, 1], "seq_lens": [40, 9]})",
                            "t.json");
  CHECK(p.id == "prefix-h4x4-d64-b16-f16-auto-q5.1-l40.9-s0");
  const Case named = parse_case(R"({"id": "my_case-1", "num_heads": 4, "head_size": 64, "dtype": "f16",
      "seq_lens": [3]})",
                                "t.json");
  CHECK(named.id == "my_case-1");
}

TEST_CASE("max_seq_len alone draws vLLM's lengths from the seed") {
  const std::string json =
      R"({"num_seqs": 7, "num_heads": 4, "head_size": 64, "dtype": "f16", "max_seq_len": 100, "seed": 5})";
  const Case a = parse_case(json, "t.json");
  REQUIRE(a.seq_lens.size() == 7);
  CHECK(a.seq_lens.back() == 100);
  for (auto len : a.seq_lens) {
    CHECK(len >= 1);
    CHECK(len <= 100);
  }
  CHECK(parse_case(json, "t.json").seq_lens == a.seq_lens);  // determinism
  const Case b = parse_case(
      R"({"num_seqs": 7, "num_heads": 4, "head_size": 64, "dtype": "f16", "max_seq_len": 100, "seed": 6})",
      "t.json");
  CHECK(b.seq_lens != a.seq_lens);
  CHECK(a.id == "decode-h4x4-d64-b16-f16-auto-n7-L100-s5");
  // Prefix: each sequence holds at least its new tokens.
  const Case p = parse_case(R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f16",
      "query_lens": [30, 1, 60], "max_seq_len": 64})",
                            "t.json");
  CHECK(p.seq_lens[0] >= 30);
  CHECK(p.seq_lens[2] == 64);
}

TEST_CASE("one length for every sequence: num_seqs with a one-entry seq_lens") {
  const Case a = parse_case(
      R"({"num_seqs": 12, "num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [300]})", "t.json");
  CHECK(a.seq_lens == std::vector<std::int32_t>(12, 300));
  CHECK(a.max_seq_len == 300);
  CHECK(a.id == "decode-h4x4-d64-b16-f16-auto-l12of300-s0");
  // The same case written out in full has the same id and tensors' lengths.
  CHECK(parse_case(case_to_json(a), "a.json").seq_lens == a.seq_lens);
  const Case p = parse_case(R"({"kernel": "prefix", "num_seqs": 3, "num_heads": 4, "head_size": 64,
      "dtype": "f16", "seq_lens": [600], "query_lens": [88]})",
                            "t.json");
  CHECK(p.query_lens == std::vector<std::int32_t>(3, 88));
  CHECK(p.seq_lens == std::vector<std::int32_t>(3, 600));
  // Several entries must match num_seqs, as before.
  CHECK(parse_error(R"({"num_seqs": 3, "num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [1, 2]})")
            .find("num_seqs") != std::string::npos);
}

TEST_CASE("num_seqs is checked against the memory limit before the lengths are built from it (issue 41)") {
  // 2e9 sequences are 8 GB of seq_lens alone: refused by the field's name, before allocating.
  set_memory_limit("1G");
  const std::string broadcast = parse_error(
      R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "num_seqs": 2000000000,
          "seq_lens": [17]})");
  CHECK(contains(broadcast, "case t.json: field 'num_seqs' = 2000000000"));
  CHECK(contains(broadcast, "of memory"));
  const std::string drawn = parse_error(
      R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "num_seqs": 2000000000,
          "max_seq_len": 17})");
  CHECK(contains(drawn, "field 'num_seqs' = 2000000000"));
  const std::string query_lens = parse_error(
      R"({"kernel": "prefix", "num_heads": 4, "head_size": 32, "dtype": "f16", "num_seqs": 2000000000,
          "seq_lens": [17], "query_lens": [8]})");
  CHECK(contains(query_lens, "field 'num_seqs' = 2000000000"));
  // A batch of ordinary size parses as before.
  CHECK(parse_case(R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "num_seqs": 1000, "seq_lens": [3]})",
                   "t.json")
            .seq_lens.size() == 1000);
  set_memory_limit("");
}

TEST_CASE("case_to_json round-trips through parse_case") {
  for (const char* json :
       {kMinimal,
        R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 64, "dtype": "bf16", "scale": 0.1,
                               "kv_cache_dtype": "fp8_e5m2", "k_scale": 0.3, "max_seq_len": 70, "num_seqs": 3,
                               "alibi": true, "num_blocks": 40, "seed": 18446744073709551615})",
        R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f32", "query_lens": [5],
                               "seq_lens": [9], "block_m": 16, "block_n": 16, "context_tile": 16})"}) {
    INFO(json);
    const Case c = parse_case(json, "t.json");
    const Case again = parse_case(case_to_json(c), "canonical");
    CHECK(again == c);
    CHECK(case_to_json(again) == case_to_json(c));
  }
}

TEST_CASE("the fields beyond golden format 1: per-head scales, prefix grid and cache options, pool options") {
  const Case c = parse_case(R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 96, "dtype": "f16",
      "kv_cache_dtype": "fp8_e5m2", "k_head_scales": [0.5, 0.25], "v_head_scales": [0.125, 2],
      "extra_table_columns": 3, "poison_unused": false, "seq_lens": [300, 77], "seed": 4})",
                            "t.json");
  CHECK(c.cache_storage_dtype() == DType::fp8_e5m2);
  CHECK(c.k_head_scales == std::vector<double>{0.5, 0.25});
  CHECK(c.v_head_scales == std::vector<double>{0.125, 2.0});
  CHECK(c.extra_table_columns == 3);
  CHECK_FALSE(c.poison_unused);
  CHECK(c.id == "decode-h8x2-d96-b16-f16-e5m2-khs0.5_0.25-vhs0.125_2-xc3-nopoison-l300.77-s4");
  CHECK(parse_case(case_to_json(c), "again") == c);
  const Case p = parse_case(R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 1, "head_size": 64,
      "dtype": "f32", "block_size": 10, "seq_lens": [300, 20], "query_lens": [100, 20], "block_m": 64,
      "block_n": 32, "sliding_window": 50, "max_query_len": 128, "cache_new_tokens": false})",
                            "t.json");
  CHECK(p.context_len(0) == 200);
  CHECK(p.context_len(1) == 0);
  CHECK(p.num_tokens() == 120);
  CHECK(p.max_query_len == 128);
  CHECK_FALSE(p.cache_new_tokens);
  CHECK(p.context_tile == 32);
  CHECK(parse_case(case_to_json(p), "again") == p);
  // Fields at their defaults stay out of the canonical JSON: older goldens' metadata is unchanged.
  const std::string plain = case_to_json(parse_case(kMinimal, "t.json"));
  for (const char* later :
       {"k_head_scales", "max_query_len", "cache_new_tokens", "extra_table_columns", "poison_unused"})
    CHECK_MESSAGE(!contains(plain, later), later);

  CHECK(contains(parse_error(R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16",
      "kv_cache_dtype": "fp8", "k_head_scales": [1], "seq_lens": [3]})"),
                 "field 'k_head_scales' must be a list of num_kv_heads = 2 numbers, got [1]"));
  CHECK(contains(parse_error(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "kv_cache_dtype": "fp8",
      "v_head_scales": [1, -2], "seq_lens": [3]})"),
                 "field 'v_head_scales' [1] = -2: must be a positive finite f32 value"));
  CHECK(contains(parse_error(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "k_head_scales": [1, 1],
      "seq_lens": [3]})"),
                 "field 'k_head_scales' applies to fp8 caches only"));
  CHECK(contains(parse_error(R"({"kernel": "prefix", "num_heads": 2, "head_size": 64, "dtype": "f16",
      "seq_lens": [30], "query_lens": [20], "max_query_len": 10})"),
                 "field 'max_query_len' = 10 is less than query_lens[0] = 20"));
  CHECK(contains(parse_error(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3],
      "cache_new_tokens": true})"),
                 "field 'cache_new_tokens' applies to prefix cases only"));
}

TEST_CASE("bad case JSON is an error naming the field") {
  struct Bad {
    const char* json;
    const char* expected;
  };
  const Bad cases[] = {
      {R"({"num_heads": 4, "head_sise": 64, "dtype": "f16", "seq_lens": [3]})",
       "unknown field 'head_sise' (did you mean 'head_size'?)"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "fp16", "seq_lens": [3]})", "'dtype' = \"fp16\""},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "alibi": 1})",
       "'alibi' must be true or false"},
      {R"({"num_heads": 4, "head_size": 64.0, "dtype": "f16", "seq_lens": [3]})",
       "'head_size' must be an integer"},
      {R"({"num_heads": 6, "num_kv_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3]})",
       "not a multiple of num_kv_heads"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3, 4], "num_seqs": 3})",
       "'num_seqs' = 3 but seq_lens has 2"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [300], "max_seq_len": 200})",
       "'max_seq_len' = 200 is less than the longest seq_len 300"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "max_seq_len": 200})", "'num_seqs' is required"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16"})", "'seq_lens' is required"},
      {R"({"head_size": 64, "dtype": "f16", "seq_lens": [3]})", "'num_heads' is required"},
      {R"({"num_heads": 4, "head_size": 120, "dtype": "f16", "kv_cache_dtype": "fp8_e4m3", "seq_lens": [3]})",
       "not a multiple of x = 16"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "partition_size": 100})",
       "'partition_size' = 100 is not a positive multiple of block_size = 16"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "seed": -1})",
       "'seed' must be an integer in [0, 2^64)"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "k_scale": 0})", "'k_scale'"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [-3]})", "'seq_lens' [0] = -3"},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "id": "a/b"})",
       "'id' = \"a/b\""},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "distribution": "gauss"})",
       "'distribution' = \"gauss\""},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "query_lens": [1]})",
       "'query_lens' applies to prefix, reshape_and_cache and write_and_attend cases only"},
      {R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f16", "query_lens": [1], "seq_lens": [3], "partition_size": 512})",
       "'partition_size' applies to decode cases only"},
      {R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f16", "query_lens": [5], "seq_lens": [3]})",
       "'seq_lens' [0] = 3 is less than query_lens[0] = 5"},
      {R"({"kernel": "encode", "num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3]})",
       "'kernel' = \"encode\""},
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3],})", "invalid JSON"},
      // A number past double's range (found by fuzz_case_json; nlohmann throws out_of_range).
      {R"({"num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [3], "soft_cap": 1e400})",
       "invalid JSON"},
      {R"([1, 2])", "expected a JSON object"},
  };
  for (const auto& b : cases) {
    INFO(b.json);
    const std::string message = parse_error(b.json);
    CHECK(contains(message, "case t.json"));
    CHECK_MESSAGE(contains(message, b.expected), message);
  }
}

TEST_CASE("decode cases take vLLM's head sizes only; prefix cases any") {
  // One list (pao/plan/launch_shape.hpp) for cases, the simulator and the CUDA kernels.
  for (int hs : {32, 64, 80, 96, 112, 120, 128, 192, 256}) {
    INFO(hs);
    CHECK(is_supported_head_size(hs));
    CHECK_NOTHROW(parse_case(
        R"({"num_heads": 2, "dtype": "f32", "seq_lens": [5], "head_size": )" + std::to_string(hs) + "}",
        "hs"));
  }
  for (int hs : {16, 72, 100, 520}) {
    INFO(hs);
    CHECK_THROWS_WITH_AS(parse_case(R"({"num_heads": 2, "dtype": "f32", "seq_lens": [5], "head_size": )" +
                                        std::to_string(hs) + "}",
                                    "hs"),
                         doctest::Contains("is not one of vLLM's decode head sizes (32, 64, 80"), Error);
  }
  CHECK_NOTHROW(parse_case(R"({"kernel": "prefix", "num_heads": 2, "head_size": 24, "dtype": "f16",
                               "query_lens": [3], "seq_lens": [9]})",
                           "vLLM's prefix test uses 24"));
}

TEST_CASE("a block_size that does not divide the default partition names block_size") {
  CHECK_THROWS_WITH_AS(
      parse_case(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [5],
                                      "block_size": 48})",
                 "bs"),
      doctest::Contains("field 'block_size' = 48 does not divide the default partition_size"), Error);
  CHECK_THROWS_WITH_AS(
      parse_case(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [5],
                                      "partition_size": 100})",
                 "ps"),
      doctest::Contains("field 'partition_size' = 100 is not a positive multiple of block_size = 16"), Error);
}

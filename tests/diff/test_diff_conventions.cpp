// Vendors' conventions through golden and diff: HND caches, fp8 prefill whose new tokens are read
// back from the quantised cache, cases vLLM's own kernels would not compute (vllm_compatible), a
// vendor whose V2 partitions differently, and the case overrides of `pao golden`.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "pao/cases/case_schema.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "support/compare.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

struct Written {
  golden::GoldenTensors g;
  fs::path path;
};

Written write_golden(const test::TempDir& dir, const cases::Case& c, const std::string& name) {
  Written w{golden::make_golden(c), dir.path() / (name + ".safetensors")};
  write_safetensors(w.path, w.g.views(), w.g.metadata);
  return w;
}

CaseReport diff_outputs(const test::TempDir& dir, const fs::path& golden, const NamedTensorViews& outputs,
                        const std::string& name) {
  const fs::path actual = dir.path() / (name + ".safetensors");
  write_safetensors(actual, outputs);
  return diff_case(golden, actual, {});
}

const TensorReport* tensor(const CaseReport& r, const std::string& name) {
  for (const auto& t : r.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

bool has_note(const CaseReport& r, const std::string& part) {
  for (const auto& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "an HND golden: the caches are [num_blocks, num_kv_heads, block_size, head_size], and a vendor "
    "computing from the file passes") {
  test::TempDir dir;
  cases::Case c = cases::parse_case(R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 64, "block_size": 16,
      "dtype": "bf16", "kv_layout": "hnd", "partition_size": 64, "seq_lens": [150, 1, 0, 77], "seed": 5})",
                                    "hnd");
  const Written w = write_golden(dir, c, "hnd");
  const golden::GoldenTensors back = golden::read_golden(golden::TensorFile::open(w.path));
  CHECK(back.golden_case.kv_layout == KVLayout::hnd);
  CHECK(back.metadata.at("kv_layout") == "hnd");
  const Tensor& kc = *back.find("key_cache");
  CHECK(kc.shape() == Shape{kc.size(0), 2, 16, 64});
  CHECK(back.find("value_cache")->shape() == kc.shape());
  // The vendor: pao's kernel on the tensors as read from the file (an HND-native kernel).
  const cases::DecodeCase dc = golden::decode_case_of(back);
  const DecodeOutputs v2 = paged_attention_v2(dc.args(), Precision::kernel, c);
  const CaseReport r = diff_outputs(dir, w.path,
                                    {{"out", v2.out.view()},
                                     {"tmp_out", v2.tmp_out.view()},
                                     {"max_logits", v2.max_logits.view()},
                                     {"exp_sums", v2.exp_sums.view()}},
                                    "vendor");
  CHECK(r.passed());
  CHECK(r.tensors.size() == 4);  // the partials too, against the exact V2 recomputed through HND
  // The same values in vLLM's layout: the same outputs, bit for bit.
  c.kv_layout = KVLayout::vllm;
  c.id.append("-vllm");
  const golden::GoldenTensors vllm = golden::make_golden(c);
  for (const char* n : {"out", "out_exact", "v1.out", "v2.out", "v2.tmp_out"})
    CHECK(test::bitwise_equal(*vllm.find(n), *back.find(n)));
}

TEST_CASE("fp8 prefill with the new tokens read back from the cache: each convention fails the other") {
  test::TempDir dir;
  const std::string base = R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
      "block_size": 16, "dtype": "bf16", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.02, "v_scale": 0.03,
      "query_lens": [40, 3, 17], "seq_lens": [60, 10, 17], "seed": 9)";
  const cases::Case vllm_style = cases::parse_case(base + "}", "input");
  const cases::Case cache_style = cases::parse_case(base + R"(, "new_kv_source": "cache"})", "cache");
  CHECK(cache_style.id != vllm_style.id);
  const Written from_input = write_golden(dir, vllm_style, "input");
  const Written from_cache = write_golden(dir, cache_style, "cache");
  CHECK(from_cache.g.metadata.at("new_kv_source") == "cache");
  CHECK(from_input.g.metadata.at("new_kv_source") == "input");
  const Tensor& input_out = *from_input.g.find("prefix.out");
  const Tensor& cache_out = *from_cache.g.find("prefix.out");
  // A FlashAttention / FlashInfer / IPEX-style kernel passes the cache golden and fails vLLM's.
  CHECK(diff_outputs(dir, from_cache.path, {{"out", cache_out.view()}}, "a").passed());
  CHECK_FALSE(diff_outputs(dir, from_input.path, {{"out", cache_out.view()}}, "b").passed());
  // vLLM's Triton convention: the other way round.
  CHECK(diff_outputs(dir, from_input.path, {{"out", input_out.view()}}, "c").passed());
  const CaseReport r = diff_outputs(dir, from_cache.path, {{"out", input_out.view()}}, "d");
  CHECK_FALSE(r.passed());
  CHECK(has_note(r, "reads the new tokens from key / value"));  // the cache golden is not vLLM's
}

TEST_CASE("new_kv_source: parse rules") {
  CHECK_THROWS_WITH_AS(
      cases::parse_case(
          R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kernel": "prefix", "query_lens": [3], "seq_lens": [5],
      "new_kv_source": "cache", "cache_new_tokens": false})",
          "x"),
      doctest::Contains("it needs cache_new_tokens true"), Error);
  CHECK_THROWS_WITH_AS(
      cases::parse_case(
          R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kernel": "prefix", "query_lens": [3], "seq_lens": [5],
      "new_kv_source": "kv"})",
          "x"),
      doctest::Contains("expected \"input\""), Error);
  CHECK_THROWS_WITH_AS(
      cases::parse_case(
          R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [5], "new_kv_source": "cache"})",
          "x"),
      doctest::Contains("new_kv_source"), Error);  // decode: prefix only
}

TEST_CASE("vllm_compatible: V1/V2 with a window, prefix with ALiBi and a window, and soft-cap") {
  struct Expect {
    const char* json;
    bool compatible;
    const char* reason;
  };
  const Expect expects[] = {
      {R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40], "sliding_window": 16})",
       false, "paged_attention_v1/v2 have no sliding window"},
      {R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40], "alibi": true})",
       true, ""},
      {R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kernel": "prefix", "query_lens": [9], "seq_lens": [40], "sliding_window": 16})",
       true, ""},
      {R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kernel": "prefix", "query_lens": [9], "seq_lens": [40], "sliding_window": 16, "alibi": true})",
       false, "_fwd_kernel_alibi, which has no sliding-window parameter"},
      {R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40], "soft_cap": 0.05})",
       false, "take no logits soft-cap"},
  };
  test::TempDir dir;
  int i = 0;
  for (const Expect& e : expects) {
    INFO(std::string(e.json));
    const cases::Case c = cases::parse_case(e.json, "compat");
    const Written w = write_golden(dir, c, std::string(1, static_cast<char>('a' + i++)));
    CHECK(w.g.metadata.at("vllm_compatible") == (e.compatible ? "true" : "false"));
    if (e.compatible) {
      CHECK(w.g.metadata.count("vllm_incompatible") == 0);
      continue;
    }
    CHECK(w.g.metadata.at("vllm_incompatible").find(e.reason) != std::string::npos);
    // The vLLM-faithful variant computes what vLLM does: here, what the case without the feature gives.
    const cases::Case faithful = cases::override_field(c, "vllm_faithful", true, "vllmfaithful");
    // Its derived id is derived again: the original's, with the "vllmfaithful" tag.
    CHECK(faithful.id != c.id);
    CHECK(faithful.id.find("-vllmfaithful-") != std::string::npos);
    const golden::GoldenTensors fg = golden::make_golden(faithful);
    CHECK(fg.metadata.at("vllm_compatible") == "true");
    CHECK(fg.metadata.at("vllm_faithful_dropped").find(e.reason) != std::string::npos);
    // Its parameters say what its outputs computed: a harness applying them passes a correct kernel.
    CHECK(fg.metadata.at("sliding_window") == "0");
    CHECK(fg.metadata.at("soft_cap") == "0");
    CHECK(w.g.metadata.at("sliding_window") == std::to_string(c.sliding_window));
    cases::Case without = c;
    without.sliding_window = 0;
    without.soft_cap = 0;
    const golden::GoldenTensors wg = golden::make_golden(without);
    CHECK(test::bitwise_equal(*fg.find("out"), *wg.find("out")));
    CHECK_FALSE(test::bitwise_equal(*fg.find("out"), *w.g.find("out")));  // the feature mattered
  }
}

TEST_CASE("a vendor whose V2 partitions differently: partials not compared, out still judged") {
  test::TempDir dir;
  const cases::Case c = cases::parse_case(R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32,
      "block_size": 16, "dtype": "f16", "partition_size": 64, "seq_lens": [150, 70, 230], "seed": 7})",
                                          "p64");
  const Written w = write_golden(dir, c, "p64");
  // The vendor's V2 uses 128-token partitions: what `pao golden --partition-size 128` writes.
  const cases::Case p128 = cases::override_field(c, "partition_size", std::int64_t{128}, "p128");
  CHECK(p128.partition_size == 128);
  // The derived id names the new partition size only (not "...-p64-...-p128").
  CHECK(c.id.find("-p64-") != std::string::npos);
  CHECK(p128.id.find("-p128-") != std::string::npos);
  CHECK(p128.id.find("p64") == std::string::npos);
  const golden::GoldenTensors vendor = golden::make_golden(p128);
  NamedTensorViews outputs = {{"out", vendor.find("v2.out")->view()},
                              {"tmp_out", vendor.find("v2.tmp_out")->view()},
                              {"max_logits", vendor.find("v2.max_logits")->view()},
                              {"exp_sums", vendor.find("v2.exp_sums")->view()}};
  const CaseReport r = diff_outputs(dir, w.path, outputs, "vendor");
  CHECK(r.passed());
  CHECK(r.tensors.size() == 1);
  CHECK(tensor(r, "out") != nullptr);
  CHECK(has_note(r, "ACTUAL's partials hold 2 partitions per (seq, head), the golden's 4"));
  CHECK(has_note(r, "pao golden --partition-size N"));
  // Counted as not compared, each once, with the reason.
  CHECK(r.not_compared == std::vector<std::string>{"v2.tmp_out (another partitioning)",
                                                   "v2.max_logits (another partitioning)",
                                                   "v2.exp_sums (another partitioning)"});
  // Against a golden of the vendor's partitioning, the partials are compared.
  const Written w128 = write_golden(dir, p128, "p128");
  const CaseReport r128 = diff_outputs(dir, w128.path, outputs, "vendor128");
  CHECK(r128.passed());
  CHECK(r128.tensors.size() == 4);
  // A bad out is still caught.
  Tensor bad = Tensor::copy_of(vendor.find("v2.out")->view());
  bad.set({1, 2, 3}, bad.at({1, 2, 3}) + 0.25);
  outputs[0] = {"out", bad.view()};
  CHECK_FALSE(diff_outputs(dir, w.path, outputs, "bad").passed());
  // An override is checked like a case file.
  CHECK_THROWS_WITH_AS(cases::override_field(c, "partition_size", std::int64_t{24}, "p24"),
                       doctest::Contains("partition_size"), Error);
  // An id the case gave is kept, with the suffix; drawn lengths keep their "n<count>-L<max>" form.
  const cases::Case named = cases::parse_case(
      R"({"id": "mine", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [9]})",
      "x");
  CHECK(cases::override_field(named, "partition_size", std::int64_t{128}, "p128").id == "mine-p128");
  const cases::Case drawn = cases::parse_case(
      R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "num_seqs": 3, "max_seq_len": 300})",
      "x");
  CHECK(drawn.id.ends_with("-n3-L300-s0"));
  CHECK(cases::override_field(drawn, "partition_size", std::int64_t{64}, "p64").id ==
        drawn.id.substr(0, drawn.id.size() - std::string("-n3-L300-s0").size()) + "-p64-n3-L300-s0");
}

TEST_CASE("the conventions suite: every golden is sound and the oracle's own outputs pass it") {
  test::TempDir dir;
  int reshape = 0, hnd = 0, incompatible = 0;
  for (const auto& c : cases::expand_suite(cases::find_suite("conventions", cases::cases_dir()), false)) {
    INFO(c.id);
    const Written w = write_golden(dir, c, c.id);
    NamedTensorViews outputs;
    if (c.kernel == cases::CaseKernel::reshape_and_cache) {
      ++reshape;
      outputs.emplace_back("key_cache", w.g.find("key_cache")->view());
      outputs.emplace_back("value_cache", w.g.find("value_cache")->view());
    } else {
      outputs.emplace_back("out",
                           w.g.find(c.kernel == cases::CaseKernel::decode ? "v2.out" : "prefix.out")->view());
    }
    hnd += c.kv_layout == KVLayout::hnd;
    incompatible += w.g.metadata.at("vllm_compatible") == "false";
    std::string vendor = c.id;
    vendor.append("-vendor");
    CHECK(diff_outputs(dir, w.path, outputs, vendor).passed());  // invariants checked too
  }
  CHECK(reshape >= 6);
  CHECK(hnd >= 8);
  CHECK(incompatible == 4);  // two fp8 cache-source prefixes, the decode window, ALiBi + window
}

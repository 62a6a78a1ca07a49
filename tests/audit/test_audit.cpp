// The detection power of pao diff, measured by the mutation library: the two bugs that slipped
// under the FlashAttention rule alone now fail, legitimate implementations pass, a mutation that
// cannot change a case says why, and the smoke suite's audit is clean.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "pao/audit/audit.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::audit;
namespace fs = std::filesystem;

namespace {

// Issue 13's reproducers: a window of 200 over sequences of 1, 17, 300 and 4096 tokens (bf16), and
// one fp8 sequence of 2,227 tokens.
const char* kWindow =
    R"({"id": "window", "num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16",
                          "sliding_window": 200, "seq_lens": [1, 17, 300, 4096]})";
const char* kFp8 = R"({"id": "fp8", "num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16",
                       "kv_cache_dtype": "fp8_e4m3", "seq_lens": [2227]})";

/// Diffs the `out` of mutation `name` on case `json` (the vendor hands over out only).
bool out_passes(const char* json, const std::string& name, const diff::DiffOptions& options = {}) {
  test::TempDir dir;
  const cases::Case c = cases::parse_case(json, "audit");
  const golden::GoldenTensors g = golden::make_golden(c);
  write_safetensors(dir.path() / "golden.safetensors", g.views(), g.metadata);
  for (const auto& [tensor, t] : vendor_outputs(find_mutation(name), c, g))
    if (tensor == "out") write_safetensors(dir.path() / "vendor.safetensors", {{"out", t.view()}});
  return diff::diff_case(dir.path() / "golden.safetensors", dir.path() / "vendor.safetensors", options)
      .passed();
}

diff::DiffOptions flash_only() {
  diff::DiffOptions o;
  o.overrides.push_back(diff::parse_policy_override("*:local=0,distributional=0"));
  return o;
}

}  // namespace

TEST_CASE("the bugs that slipped under the FlashAttention rule alone fail the default rule") {
  CHECK(out_passes(kWindow, "window_plus_one", flash_only()));  // what the global criterion saw
  CHECK_FALSE(out_passes(kWindow, "window_plus_one"));
  CHECK(out_passes(kFp8, "last_token_dropped", flash_only()));
  CHECK_FALSE(out_passes(kFp8, "last_token_dropped"));
  for (const char* legit : {"independent_kernel", "fp32_probabilities", "fused_multiply_add", "no_guard",
                            "other_partition_size", "other_reduction_order", "correctly_rounded"}) {
    INFO(legit);
    CHECK(out_passes(kWindow, legit));
    CHECK(out_passes(kFp8, legit));
  }
}

TEST_CASE("a mutation that cannot change a case says why") {
  const cases::Case one = cases::parse_case(
      R"({"num_heads": 4, "num_kv_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [255], "partition_size": 256})",
      "one partition");
  CHECK(not_applicable(find_mutation("partials_swapped"), one).find("2+ V2 partitions") != std::string::npos);
  CHECK(not_applicable(find_mutation("window_plus_one"), one) == "the case has no sliding window");
  CHECK(not_applicable(find_mutation("k_scale_ignored"), one) == "the cache is not fp8");
  CHECK(not_applicable(find_mutation("gqa_head_mapping"), one).starts_with("MHA"));
  CHECK(not_applicable(find_mutation("last_token_dropped"), one).empty());
  CHECK_THROWS_WITH_AS(vendor_outputs(find_mutation("partials_swapped"), one, golden::make_golden(one)),
                       doctest::Contains("does not apply"), Error);
  CHECK_THROWS_WITH_AS(find_mutation("typo"), doctest::Contains("window_plus_one"), Error);
}

TEST_CASE("every bug changes its case's outputs, and the legitimate kernels stay within the oracle's error") {
  // The adversarial decode case of the smoke suite, fp8 with scales: every decode bug applies.
  const cases::Case c = cases::parse_case(
      R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "kv_cache_dtype": "fp8_e4m3",
          "k_scale": 0.5, "v_scale": 0.25, "alibi": true, "partition_size": 128, "seq_lens": [1, 17, 300],
          "distribution": "large_logits", "seed": 5})",
      "adversarial");
  const golden::GoldenTensors g = golden::make_golden(c);
  const Tensor clean =
      Tensor::copy_of(vendor_outputs(find_mutation("independent_kernel"), c, g)[0].second.view());
  for (const auto& m : mutations()) {
    if (!not_applicable(m, c).empty()) continue;
    INFO(m.name);
    const auto outputs = vendor_outputs(m, c, g);
    REQUIRE(outputs[0].first == "out");
    const auto a = outputs[0].second.to_f64(), b = clean.to_f64();
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      diff = std::max(diff, std::isnan(a[i]) ? 1e300 : std::fabs(a[i] - b[i]));
    if (m.kind == MutationKind::bug) {
      CHECK(diff > 0);
    } else {
      CHECK(diff < 1e-2);
    }
  }
}

TEST_CASE("pao audit of the smoke suite: every bug caught, every legitimate variation passed") {
  test::TempDir dir;
  AuditOptions options;
  options.scratch = dir.path() / "scratch";
  const auto audits =
      audit_cases(cases::expand_suite(cases::find_suite("smoke", cases::cases_dir()), false), options);
  const AuditMatrix m = make_matrix(audits);
  for (const auto& miss : m.misses) MESSAGE(miss);
  CHECK(m.clean());
  // Every bug class is exercised by the suite, in every dtype class where it can exist.
  for (const auto& name : m.mutations) {
    INFO(name);
    std::int64_t applicable = 0;
    for (const auto& [cls, cell] : m.cells.at(name)) applicable += cell.applicable;
    CHECK(applicable > 0);
    for (const char* cls : {"f32", "f16", "bf16", "fp8"}) {
      const bool fp8_only =
          name == "k_scale_ignored" || name == "v_scale_ignored" || name == "fp8_other_format";
      if (fp8_only && std::string(cls) != "fp8") continue;
      INFO(cls);
      CHECK(m.cells.at(name).count(cls) == 1);
      CHECK(m.cells.at(name).at(cls).applicable > 0);
    }
  }
  CHECK(render_matrix_svg(m, "smoke").find("<svg") == 0);
}

// Naming a failure by what it matches: bugs of the mutation library, computed for real by its
// independent fp32 kernel, get "matches-variant" with the right convention (a scale ignored, the
// window off by one, ALiBi ignored) on out, and "uniform-ratio" on partials scaled by a constant;
// a correct kernel still passes, and an unrelated bug is not given a wrong name.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "pao/audit/mutations.hpp"
#include "pao/cases/case.hpp"
#include "pao/diff/diagnose.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

const char* kCase = R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 64, "block_size": 16, "dtype": "f16",
    "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25, "alibi": true, "sliding_window": 100,
    "partition_size": 64, "seq_lens": [30, 170, 300], "distribution": "large_logits", "seed": 2})";

CaseReport diff_mutant(const test::TempDir& dir, const std::string& bug) {
  const cases::Case c = cases::parse_case(kCase, "diagnose");
  const golden::GoldenTensors g = golden::make_golden(c);
  const fs::path golden_path = dir.path() / "g.safetensors";
  write_safetensors(golden_path, g.views(), g.metadata);
  const auto outputs = audit::vendor_outputs(audit::find_mutation(bug), c, g);
  NamedTensorViews views;
  for (const auto& [name, t] : outputs) views.emplace_back(name, t.view());
  const fs::path actual = dir.path() / (bug + ".safetensors");
  write_safetensors(actual, views);
  return diff_case(golden_path, actual, {});
}

const TensorReport& out_of(const CaseReport& r) {
  for (const auto& t : r.tensors)
    if (t.name == "out") return t;
  FAIL("no out");
  return r.tensors.front();
}

}  // namespace

TEST_CASE("a failing out is named by the convention it matches") {
  const struct {
    const char* bug;
    const char* name;
  } expects[] = {
      {"v_scale_ignored", "v_scale ignored"},
      {"k_scale_ignored", "k_scale ignored"},
      {"window_plus_one", "the sliding window one token wider (W + 1)"},
      {"alibi_missing", "ALiBi ignored"},
  };
  test::TempDir dir;
  for (const auto& e : expects) {
    INFO(std::string(e.bug));
    const CaseReport r = diff_mutant(dir, e.bug);
    const TensorReport& t = out_of(r);
    CHECK_FALSE(t.passed);
    CHECK(t.verdict.pattern == Pattern::matches_variant);
    CHECK_MESSAGE(
        t.verdict.detail.find(std::string("the oracle's with ") + e.name + " (") != std::string::npos,
        t.verdict.detail);
    CHECK(t.verdict.detail.find("; by location: ") != std::string::npos);  // the location verdict stays
  }
}

TEST_CASE(
    "partials scaled by a constant are a uniform ratio; a correct kernel passes; other bugs keep their "
    "location pattern") {
  test::TempDir dir;
  const CaseReport v = diff_mutant(dir, "v_scale_ignored");
  for (const auto& t : v.tensors)
    if (t.name == "v2.tmp_out") {
      CHECK(t.verdict.pattern == Pattern::uniform_ratio);
      CHECK(t.verdict.detail.find("actual = 4 x expected") != std::string::npos);  // 1 / v_scale
    }
  CHECK(diff_mutant(dir, "independent_kernel").passed());
  const CaseReport r = diff_mutant(dir, "block_table_off_by_one");
  const TensorReport& swapped = out_of(r);
  CHECK_FALSE(swapped.passed);
  CHECK(swapped.verdict.pattern != Pattern::matches_variant);
  CHECK(swapped.verdict.pattern != Pattern::uniform_ratio);
}

TEST_CASE("uniform_ratio: a constant factor, not noise or a factor of 1") {
  std::vector<double> e, a4, noisy, same;
  for (int i = 0; i < 100; ++i) {
    const double x = (i % 7 - 3) * 0.1 + 0.05;
    e.push_back(x);
    a4.push_back(4 * x);
    noisy.push_back(x * (1 + 0.5 * ((i * 37) % 11 - 5) / 5.0));
    same.push_back(x * 1.001);
  }
  REQUIRE(uniform_ratio(a4, e).has_value());
  CHECK(*uniform_ratio(a4, e) == doctest::Approx(4.0));
  CHECK_FALSE(uniform_ratio(noisy, e).has_value());
  CHECK_FALSE(uniform_ratio(same, e).has_value());
}

TEST_CASE("a non-finite out is nan-inf before any variant: an all-inf out of a u8 golden") {
  // Issue 41: the zero-points variant "matched" an all +inf out (max |actual - that| 0) because a
  // non-finite element was skipped whenever neither side was NaN.
  test::TempDir dir;
  const cases::Case c =
      cases::parse_case(R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
      "kv_cache_dtype": "u8", "partition_size": 32, "seq_lens": [40, 70], "seed": 1})",
                        "diagnose");
  const golden::GoldenTensors g = golden::make_golden(c);
  const fs::path golden_path = dir.path() / "g.safetensors";
  write_safetensors(golden_path, g.views(), g.metadata);
  const double inf = std::numeric_limits<double>::infinity();
  for (const double bad : {inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
    INFO(bad);
    Tensor out = Tensor::copy_of(g.find("v2.out")->view());
    for (std::int64_t i = 0; i < out.numel(); ++i) out.set({i / 128, i / 32 % 4, i % 32}, bad);
    write_safetensors(dir.path() / "v.safetensors", {{"out", out.view()}});
    const CaseReport r = diff_case(golden_path, dir.path() / "v.safetensors", {});
    const TensorReport& t = out_of(r);
    CHECK_FALSE(t.passed);
    // Named by where it is: nan-inf (NaN may be blamed on the golden's NaN-poisoned unused slots).
    CHECK_MESSAGE((t.verdict.pattern == Pattern::nan_inf ||
                   (std::isnan(bad) && t.verdict.pattern == Pattern::unused_slots)),
                  t.verdict.detail);
    CHECK(t.verdict.pattern != Pattern::matches_variant);
  }
  // The same golden: its correct output passes, and the zero points ignored is still named.
  write_safetensors(dir.path() / "ok.safetensors", {{"out", g.find("v2.out")->view()}});
  CHECK(diff_case(golden_path, dir.path() / "ok.safetensors", {}).passed());
  const auto outputs = audit::vendor_outputs(audit::find_mutation("zero_point_ignored"), c, g);
  NamedTensorViews views;
  for (const auto& [name, t] : outputs) views.emplace_back(name, t.view());
  write_safetensors(dir.path() / "zp.safetensors", views);
  const CaseReport zp_report = diff_case(golden_path, dir.path() / "zp.safetensors", {});
  const TensorReport& zp = out_of(zp_report);  // a reference into the report, which must outlive it
  CHECK_FALSE(zp.passed);
  CHECK(zp.verdict.pattern == Pattern::matches_variant);
}

// The detection power of pao diff, measured by the mutation library: the two bugs that slipped
// under the FlashAttention rule alone now fail, legitimate implementations pass, a mutation that
// cannot change a case says why, the audit of the smoke and causes suites is clean, and the cause
// pao diff names is the bug's for >= 90% of the caught (bug, case) pairs that show one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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
  CHECK(not_applicable(find_mutation("zero_point_ignored"), one) == "the cache is not an integer cache");
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

TEST_CASE(
    "pao audit of the smoke, causes and integer suites: every bug caught, every legitimate variation "
    "passed") {
  test::TempDir dir;
  AuditOptions options;
  options.scratch = dir.path() / "scratch";
  std::vector<cases::Case> suite = cases::expand_suite(cases::find_suite("smoke", cases::cases_dir()), false);
  for (const char* more : {"causes", "integer"})
    for (auto& c : cases::expand_suite(cases::find_suite(more, cases::cases_dir()), false))
      suite.push_back(std::move(c));
  const auto audits = audit_cases(suite, options);
  const AuditMatrix m = make_matrix(audits);
  for (const auto& miss : m.misses) MESSAGE(miss);
  CHECK(m.clean());
  // Every bug class is exercised by the suite, in every dtype class where it can exist.
  for (const auto& name : m.mutations) {
    INFO(name);
    std::int64_t applicable = 0;
    for (const auto& [cls, cell] : m.cells.at(name)) applicable += cell.applicable;
    CHECK(applicable > 0);
    for (const char* cls : {"f32", "f16", "bf16", "fp8", "int8"}) {
      const bool fp8_only =
          name == "k_scale_ignored" || name == "v_scale_ignored" || name == "fp8_other_format";
      const bool integer_only = name == "zero_point_ignored" || name == "quant_params_of_neighbour" ||
                                name == "integer_sign_confused" || name == "u4_nibbles_swapped";
      if (fp8_only && std::string(cls) != "fp8") continue;
      if (integer_only && std::string(cls) != "int8") continue;
      INFO(cls);
      CHECK(m.cells.at(name).count(cls) == 1);
      CHECK(m.cells.at(name).at(cls).applicable > 0);
    }
  }
  CHECK(render_matrix_svg(m, "smoke").find("<svg") == 0);
  // The cause pao diff names is the bug's for >= 90% of the caught (bug, case) pairs whose case
  // shows one, and every bug that has a cause is named by it somewhere.
  if (10 * m.cause_named() < 9 * m.cause_exists())
    for (const auto& u : m.unnamed) MESSAGE(u);
  CHECK(10 * m.cause_named() >= 9 * m.cause_exists());
  for (const char* bug : {"last_token_dropped", "window_plus_one", "window_minus_one", "causal_off_by_one",
                          "alibi_missing", "k_scale_ignored", "v_scale_ignored", "gqa_head_mapping",
                          "partition_boundary_off_by_one", "reduce_without_max_rescaling", "partials_swapped",
                          "nan_leak", "partial_block_dropped", "zero_point_ignored"}) {
    INFO(bug);
    std::int64_t named = 0;
    for (const auto& [cls, cell] : m.cells.at(bug)) named += cell.cause_named;
    CHECK(named > 0);
  }
  for (const char* bug : {"alibi_sign_flipped", "softmax_scale_log2e", "block_table_off_by_one"}) {
    INFO(bug);  // they change every row alike: no structural cause to count
    for (const auto& [cls, cell] : m.cells.at(bug)) CHECK(cell.cause_exists == 0);
  }
}

TEST_CASE("the cause named for real bugs: the structure of the case that the failing rows share") {
  // Sequences of 1, 17, 32 and 300 tokens (block 16, partition 128): one ends on a block boundary,
  // one has 3 partitions; the vendor hands over out alone.
  const char* json = R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 64, "dtype": "f16",
                         "partition_size": 128, "seq_lens": [1, 17, 32, 300], "distribution": "large_logits",
                         "seed": 5})";
  const cases::Case c = cases::parse_case(json, "structure");
  const golden::GoldenTensors g = golden::make_golden(c);
  test::TempDir dir;
  write_safetensors(dir.path() / "golden.safetensors", g.views(), g.metadata);
  const auto cause_of = [&](const std::string& bug) {
    for (const auto& [tensor, t] : vendor_outputs(find_mutation(bug), c, g))
      if (tensor == "out") write_safetensors(dir.path() / "vendor.safetensors", {{"out", t.view()}});
    return diff::diff_case(dir.path() / "golden.safetensors", dir.path() / "vendor.safetensors", {}).cause;
  };
  const diff::Verdict reduce = cause_of("reduce_without_max_rescaling");
  CHECK(reduce.pattern == diff::Pattern::multi_partition);
  CHECK(reduce.detail.find("seq 3: 1 of 4") != std::string::npos);
  CHECK(reduce.detail.find("the partials or the reduce") != std::string::npos);
  const diff::Verdict block = cause_of("partial_block_dropped");
  CHECK(block.pattern == diff::Pattern::partial_block);
  CHECK(block.detail.find("seqs 0, 1, 3") != std::string::npos);
  CHECK(cause_of("gqa_head_mapping").pattern == diff::Pattern::kv_head_mapping);
  CHECK(cause_of("nan_leak").pattern == diff::Pattern::unused_slots);
}

TEST_CASE(
    "pao audit of fused write-and-attend cases: the attention's bugs caught with the caches written right") {
  // Large logits: where the scale bugs show (docs/golden.md: at vLLM's uniform values some bf16
  // cases keep them under the bound's floor). One case each of an activation, an fp8 and an
  // integer (by-channel key, requantised blocks) cache.
  test::TempDir dir;
  AuditOptions options;
  options.scratch = dir.path() / "scratch";
  std::vector<cases::Case> suite;
  for (const char* cache :
       {R"("kv_cache_dtype": "auto")", R"("kv_cache_dtype": "fp8_e4m3", "k_scale": 0.05, "v_scale": 0.02)",
        R"("kv_cache_dtype": "u8", "kv_layout": "hnd", "kv_quant": {"rule": "openvino"})"})
    suite.push_back(cases::parse_case(
        std::string(R"({"kernel": "write_and_attend", "num_heads": 8, "num_kv_heads": 2, "head_size": 64,
            "dtype": "f16", "distribution": "large_logits", "alibi": true, "query_lens": [1, 7, 29],
            "seq_lens": [1, 40, 77], )") +
            cache + "}",
        "wa.json"));
  const AuditMatrix m = make_matrix(audit_cases(suite, options));
  for (const auto& miss : m.misses) MESSAGE(miss);
  CHECK(m.clean());
  // Bugs of every kind of cache caught, each where it can show.
  const auto total = [&](const std::string& name) {
    MatrixCell sum;
    for (const auto& [cls, cell] : m.cells.at(name))
      sum.applicable += cell.applicable, sum.as_expected += cell.as_expected;
    return sum;
  };
  for (const auto& [name, cases] :
       std::vector<std::pair<std::string, std::int64_t>>{{"last_token_dropped", 3},
                                                         {"causal_off_by_one", 3},
                                                         {"k_scale_ignored", 1},
                                                         {"zero_point_ignored", 1},
                                                         {"independent_kernel", 3}}) {
    INFO(name);
    CHECK(total(name).applicable == cases);
    CHECK(total(name).as_expected == cases);
  }
}

TEST_CASE("an audit of nothing is not a pass: no attending case, no mutation that applies, a named one") {
  const auto outcome = [](const char* mutation, const char* why) {
    MutationOutcome o;
    o.mutation = mutation;
    o.not_applicable = why;
    o.diff_passed = false;  // a bug that ran and was caught
    return o;
  };
  // A suite of reshape_and_cache cases only: audit_cases audits none of them.
  const std::vector<std::string> none = audited_nothing({}, 2, {});
  REQUIRE(none.size() == 1);
  CHECK(none[0].find("none of the 2 cases attends") != std::string::npos);
  CHECK(none[0].find("nothing was audited, which is not a pass") != std::string::npos);

  CaseAudit no_alibi{"decode-x", "f16", {outcome("alibi_missing", "the case has no ALiBi")}};
  const std::vector<std::string> unapplied = audited_nothing({no_alibi}, 1, {"alibi_missing"});
  REQUIRE(unapplied.size() == 1);
  CHECK(
      unapplied[0].find("no mutation applies to any of the 1 cases audited (e.g. alibi_missing on decode-x: "
                        "the case has no ALiBi)") == 0);

  // A named mutation that applied nowhere, beside one that ran: still not a pass; unnamed ones
  // (every mutation by default) may apply to no case of a suite.
  no_alibi.outcomes.push_back(outcome("last_token_dropped", ""));
  const auto named = audited_nothing({no_alibi}, 1, {"alibi_missing", "last_token_dropped"});
  REQUIRE(named.size() == 1);
  CHECK(named[0].starts_with("alibi_missing applies to none of the 1 cases audited"));
  CHECK(audited_nothing({no_alibi}, 1, {}).empty());
  CHECK(audited_nothing({no_alibi}, 1, {"last_token_dropped"}).empty());
}

TEST_CASE("a cache-writing kind's vendor hands over its caches beside a bug, only those the case has") {
  const cases::Case c = cases::parse_case(
      R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
          "seq_lens": [20, 9], "query_lens": [5, 9]})",
      "write_and_attend");
  const golden::GoldenTensors g = golden::make_golden(c);
  auto outputs = vendor_outputs(find_mutation("last_token_dropped"), c, g);
  add_written_caches(c, g, outputs);
  std::vector<std::string> names;
  for (const auto& [name, t] : outputs) names.push_back(name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"key_cache", "out", "value_cache"});  // no key_cache_scale (f16)

  auto rounded = vendor_outputs(find_mutation("correctly_rounded"), c, g);
  add_written_caches(c, g, rounded);
  test::TempDir dir;
  write_safetensors(dir.path() / "golden.safetensors", g.views(), g.metadata);
  NamedTensorViews views;
  for (const auto& [name, t] : rounded) views.emplace_back(name, t.view());
  write_safetensors(dir.path() / "vendor.safetensors", views);
  CHECK(diff::diff_case(dir.path() / "golden.safetensors", dir.path() / "vendor.safetensors", {}).passed());
}

TEST_CASE("pao audit's scratch folder: only audit's own folder in it is written and removed") {
  // A scratch folder holding a golden of the very case audited (pao audit --scratch GOLDENS):
  // audit writes into a folder of its own inside it, never over the golden, and removes only that.
  test::TempDir dir;
  const cases::Case c = cases::parse_case(
      R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32,
          "seq_lens": [40, 70]})",
      "c.json");
  const fs::path scratch = dir.path() / "goldens";
  fs::create_directories(scratch);
  const fs::path theirs = scratch / (c.id + ".safetensors");
  { std::ofstream(theirs) << "the user's golden"; }
  // What a killed audit left (a dead process's folder) goes; a live one's stays.
  const fs::path stale = scratch / ".pao-audit.pao-tmp-999999999-0";
  fs::create_directories(stale);
  // Another tool's temporary of a dead process is not audit's business in a shared folder.
  const fs::path other = scratch / ".x.safetensors.pao-tmp.999999999.0";
  { std::ofstream(other) << "partial"; }
  AuditOptions options;
  options.scratch = scratch;
  options.mutations = {"last_token_dropped"};
  const auto audits = audit_cases({c}, options);
  REQUIRE(audits.size() == 1);
  std::ifstream in(theirs);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "the user's golden");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(other));
  fs::remove(other);
  std::vector<fs::path> left{fs::directory_iterator(scratch), fs::directory_iterator()};
  REQUIRE(left.size() == 1);
  CHECK(left[0] == theirs);
}

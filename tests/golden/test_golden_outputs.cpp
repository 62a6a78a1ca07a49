// Smaller goldens (`pao golden --outputs`): a golden holds the outputs chosen; every reader
// recomputes the others from its inputs, bit for bit, so a vendor's verdicts — on real planted
// bugs — are the same against a small golden as against a whole one; the invariants still catch
// a damaged output in a small golden.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "pao/audit/mutant_kernel.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/manifest.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/run.hpp"
#include "pao/golden/verify.hpp"
#include "pao/io/safetensors.hpp"
#include "support/compare.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::golden;
namespace fs = std::filesystem;

namespace {

// Decode: GQA 4/2, fp8 e4m3 with scales, 3 sequences of 1 to 4 partitions of 64 (one mid-block).
const char* kDecode = R"({"id": "d", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "block_size": 16,
                          "dtype": "f16", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25,
                          "partition_size": 64, "seq_lens": [150, 37, 230], "seed": 11})";
const char* kPrefix = R"({"id": "p", "kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 32,
                          "block_size": 16, "dtype": "bf16", "query_lens": [5, 9], "seq_lens": [40, 9],
                          "seed": 4})";

fs::path write(const GoldenTensors& g, const fs::path& path) {
  write_safetensors(path, g.views(), g.metadata);
  return path;
}

std::vector<std::string> names_of(const GoldenTensors& g) {
  std::vector<std::string> out;
  for (const auto& [n, t] : g.tensors) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("--outputs: groups parse, print canonically and refuse unknown names") {
  CHECK(to_string(parse_output_selection("exact,v2,partials")) == "exact,v2,partials");
  CHECK(to_string(parse_output_selection("v2,exact")) == "exact,v2");
  CHECK(to_string(parse_output_selection("kernel")) == "kernel");
  CHECK(to_string(parse_output_selection("v1,v2,prefix")) == "v1,v2,prefix");
  CHECK(to_string(parse_output_selection("kernel,exact")) == "all");
  CHECK(parse_output_selection("all").all());
  CHECK(to_string(parse_output_selection("none")) == "none");
  CHECK_THROWS_WITH_AS(parse_output_selection("exact,v3"), doctest::Contains("unknown output group 'v3'"),
                       Error);
  CHECK_THROWS_WITH_AS(parse_output_selection(""), doctest::Contains("unknown output group ''"), Error);
  const OutputSelection s = parse_output_selection("exact,partials");
  CHECK(selected_output_names(cases::CaseKernel::decode, s) ==
        std::vector<std::string>{"out", "out_exact", "v2.tmp_out", "v2.max_logits", "v2.exp_sums"});
  CHECK(selected_output_names(cases::CaseKernel::prefix, s) == std::vector<std::string>{"out", "out_exact"});
  // A cache write keeps its caches whatever the selection (the params: integer caches only, which
  // make_golden keeps by golden_tensor_applies).
  CHECK(selected_output_names(cases::CaseKernel::reshape_and_cache, parse_output_selection("none")) ==
        std::vector<std::string>{"key_cache", "value_cache", "key_cache_scale", "key_cache_zero_point",
                                 "value_cache_scale", "value_cache_zero_point"});
}

TEST_CASE("a golden holds the outputs chosen; the others are recomputed bit for bit") {
  test::TempDir dir;
  for (const char* json : {kDecode, kPrefix}) {
    const cases::Case c = cases::parse_case(json, "outputs");
    const GoldenTensors whole = make_golden(c);
    for (const char* groups : {"none", "exact", "kernel", "v2,partials", "v1,prefix"}) {
      CAPTURE(c.id);
      CAPTURE(groups);
      const OutputSelection s = parse_output_selection(groups);
      const GoldenTensors small = make_golden(c, s);
      const auto selected = selected_output_names(c.kernel, s);
      for (const auto& n : names_of(small)) CHECK(whole.find(n) != nullptr);  // nothing a whole one lacks
      for (const auto& n : golden_output_names(c.kernel)) {
        const bool chosen = std::find(selected.begin(), selected.end(), n) != selected.end();
        CHECK(static_cast<bool>(small.find(n)) == chosen);
      }
      std::string listed;
      for (const auto& n : selected) {
        if (!listed.empty()) listed += ',';
        listed += n;
      }
      CHECK(small.metadata.at("outputs") == listed);

      const fs::path path = write(small, dir.path() / (c.id + "-small.safetensors"));
      const GoldenTensors read = read_golden(TensorFile::open(path));
      REQUIRE(read.tensors.size() == whole.tensors.size());
      for (const auto& [n, t] : whole.tensors) {
        CAPTURE(n);
        REQUIRE(read.find(n) != nullptr);
        CHECK(test::bitwise_equal(*read.find(n), t));
      }
      CHECK(read_golden(TensorFile::open(path), false).tensors.size() == small.tensors.size());
      const InvariantReport r = check_golden_invariants(TensorFile::open(path));
      CHECK(r.ok());
      CHECK(r.exact_recomputed == (!small.find("out_exact") && !selected.empty()));
      CHECK(recompute_mismatches(TensorFile::open(path)).empty());
    }
  }
}

TEST_CASE("planted bugs get the same verdicts against a small golden as against a whole one") {
  test::TempDir dir;
  const cases::Case c = cases::parse_case(kDecode, "outputs");
  const GoldenTensors whole = make_golden(c);
  const fs::path whole_path = write(whole, dir.path() / "whole.safetensors");
  std::vector<fs::path> small_paths;
  for (const char* groups : {"none", "exact", "v2,partials"})
    small_paths.push_back(write(make_golden(c, parse_output_selection(groups)),
                                dir.path() / (std::string(groups) + ".safetensors")));
  std::size_t failing = 0;
  for (const audit::Bug bug : {audit::Bug::none, audit::Bug::last_token_dropped, audit::Bug::partials_swapped,
                               audit::Bug::v_scale_ignored, audit::Bug::gqa_head_mapping}) {
    CAPTURE(static_cast<int>(bug));
    audit::MutantOptions o;
    o.bug = bug;
    const auto outputs = audit::run_mutant(c, whole, o);
    NamedTensorViews views;
    for (const auto& [n, t] : outputs) views.emplace_back(n, t.view());
    const fs::path actual = dir.path() / ("vendor" + std::to_string(static_cast<int>(bug)) + ".safetensors");
    write_safetensors(actual, views);
    diff::DiffOptions options;
    options.reduce = true;
    const diff::CaseReport expected = diff::diff_case(whole_path, actual, options);
    failing += expected.passed() ? 0 : 1;
    CHECK(expected.passed() == (bug == audit::Bug::none));
    for (const auto& small : small_paths) {
      CAPTURE(small.filename().string());
      const diff::CaseReport got = diff::diff_case(small, actual, options);
      REQUIRE(got.tensors.size() == expected.tensors.size());
      CHECK(got.passed() == expected.passed());
      for (std::size_t i = 0; i < got.tensors.size(); ++i) {
        const auto &a = got.tensors[i], &b = expected.tensors[i];
        CAPTURE(a.name);
        CHECK(a.name == b.name);
        CHECK(a.passed == b.passed);
        CHECK(a.max_abs_error == b.max_abs_error);
        CHECK(a.bound == b.bound);
        CHECK(a.verdict.pattern == b.verdict.pattern);
        CHECK(a.verdict.detail == b.verdict.detail);
      }
    }
  }
  CHECK(failing == 4);
}

TEST_CASE("a damaged output in a small golden is still refused") {
  test::TempDir dir;
  const cases::Case c = cases::parse_case(kDecode, "outputs");
  SUBCASE("v2.out off by a lot, out_exact left out: checked against the recomputed exact") {
    GoldenTensors g = make_golden(c, parse_output_selection("v2"));
    for (auto& [n, t] : g.tensors)
      if (n == "v2.out") t.set({2, 1, 3}, t.at({2, 1, 3}) + 0.5);
    const InvariantReport r =
        check_golden_invariants(TensorFile::open(write(g, dir.path() / "a.safetensors")));
    CHECK(r.exact_recomputed);
    REQUIRE_FALSE(r.ok());
    CHECK(r.violations[0].text().starts_with("v2.out[2, 1, 3] (seq 2, head 1, dim 3): kernel bound"));
  }
  SUBCASE("out one ulp off, alone with out_exact") {
    GoldenTensors g = make_golden(c, parse_output_selection("exact"));
    for (auto& [n, t] : g.tensors)
      if (n == "out") t.set({0, 2, 5}, t.at({0, 2, 5}) * (1 + 0x1p-10));
    const InvariantReport r =
        check_golden_invariants(TensorFile::open(write(g, dir.path() / "b.safetensors")));
    CHECK_FALSE(r.exact_recomputed);
    REQUIRE(r.violation_count == 1);
    CHECK(r.violations[0].text().starts_with("out[0, 2, 5] (seq 0, head 2, dim 5): rounding"));
  }
  SUBCASE("an output the metadata lists but the file lacks is missing for verify --recompute") {
    GoldenTensors g = make_golden(c, parse_output_selection("exact"));
    g.metadata["outputs"] = "out,out_exact,v1.out";
    const auto m = recompute_mismatches(TensorFile::open(write(g, dir.path() / "c.safetensors")));
    REQUIRE(m.size() == 1);
    CHECK(m[0] == "v1.out: missing from the file");
  }
}

TEST_CASE("run_golden records the selection, and a new selection regenerates") {
  test::TempDir dir;
  GoldenRunOptions o;
  o.out_dir = dir.path();
  o.suite = "t";
  o.outputs = parse_output_selection("exact");
  o.golden_flags = "--outputs exact";
  const cases::Case c = cases::parse_case(kDecode, "outputs");
  REQUIRE(run_golden({c}, o).written == 1);
  Manifest m = read_manifest(dir.path() / "manifest.json");
  REQUIRE(m.entries.size() == 1);
  CHECK(m.entries[0].outputs == "exact");
  CHECK(m.golden_flags == "--outputs exact");
  CHECK(regenerate_command(m, dir.path()).find("--suite t --outputs exact --out") != std::string::npos);
  CHECK(run_golden({c}, o).skipped == 1);
  o.outputs = OutputSelection{};
  CHECK(run_golden({c}, o).written == 1);
  m = read_manifest(dir.path() / "manifest.json");
  CHECK(m.entries[0].outputs == "all");
  CHECK(TensorFile::open(dir.path() / "d.safetensors").has("v1.out"));
}

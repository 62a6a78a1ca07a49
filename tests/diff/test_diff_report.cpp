// `pao diff` beyond the planted bugs: policy overrides, folder matching (missing and unmatched
// cases), bad ACTUALs, the location text, and the text / JSON / JUnit reports.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "pao/core/error.hpp"
#include "pao/diff/report.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/run.hpp"
#include "pao/io/npy.hpp"
#include "pao/io/safetensors.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

using TempDir = test::TempDir;

/// DiffOptions with one --policy.
DiffOptions with_policy(PolicyOverride policy) {
  DiffOptions o;
  o.overrides.push_back(std::move(policy));
  return o;
}

cases::Case small(int seed) {
  return cases::parse_case(R"({"num_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 16,
                                "seq_lens": [20, 40], "seed": )" +
                               std::to_string(seed) + "}",
                           "small");
}

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  const auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("policy overrides parse and apply per tensor") {
  const PolicyOverride a = parse_policy_override("v2.tmp_out:rtol=1e-2,atol=1e-4");
  CHECK(a.tensor == "v2.tmp_out");
  CHECK(a.rule == Rule::elementwise);
  const Policy p = apply_overrides(default_policy("v2.tmp_out", DType::f16), "v2.tmp_out", {a});
  CHECK(p.rtol == 1e-2);
  CHECK(p.atol == 1e-4);
  CHECK(apply_overrides(default_policy("v2.exp_sums", DType::f32), "v2.exp_sums", {a}).rtol == 1.3e-6);
  CHECK(parse_policy_override("out:k=3").rule == Rule::flash);
  CHECK(parse_policy_override("*:nmse=1e-4").rule == Rule::nmse);
  CHECK(parse_policy_override("out:rule=nmse,nmse=1e-3").nmse == 1e-3);
  CHECK(apply_overrides(default_policy("out", DType::bf16), "out", {parse_policy_override("*:k=4")}).k == 4);
  // A wildcard tunes the tensors under its rule only; an explicit rule applies everywhere.
  CHECK(apply_overrides(default_policy("v2.exp_sums", DType::f32), "v2.exp_sums",
                        {parse_policy_override("*:rtol=0.1")})
            .rule == Rule::flash);
  CHECK(apply_overrides(default_policy("v2.exp_sums", DType::f32), "v2.exp_sums",
                        {parse_policy_override("v2.exp_sums:rtol=0.1")})
            .rule == Rule::elementwise);
  const Policy off = apply_overrides(default_policy("out", DType::f16), "out",
                                     {parse_policy_override("*:local=0,distributional=0")});
  CHECK_FALSE(off.local);
  CHECK_FALSE(off.distributional);
  CHECK(off.rule == Rule::flash);
  CHECK(
      apply_overrides(default_policy("out", DType::f16), "out", {parse_policy_override("*:rtol=0.1")}).rule ==
      Rule::flash);
  CHECK(apply_overrides(default_policy("out", DType::f16), "out",
                        {parse_policy_override("*:rule=elementwise,rtol=0.1")})
            .rtol == 0.1);
  CHECK(apply_overrides(default_policy("v2.tmp_out", DType::f16), "v2.tmp_out",
                        {parse_policy_override("*:nmse=1e-4")})
            .rule == Rule::nmse);
  CHECK(default_policy("out", DType::bf16).rule == Rule::flash);
  // vLLM's names are aliases; an unknown name says which names there are.
  CHECK(parse_policy_override("tmp_out:rtol=1").tensor == "v2.tmp_out");
  CHECK(parse_policy_override("output:k=3").tensor == "out");
  CHECK_THROWS_WITH_AS(parse_policy_override("v2.out_exact:k=3"), doctest::Contains("did you mean v2.out?"),
                       Error);
  // Partials too: the diff recomputes the exact V2's partials for them.
  CHECK(default_policy("v2.max_logits", DType::f32).rule == Rule::flash);
  for (const char* bad : {"out", "out:", ":k=1", "out:k", "out:k=-1", "out:k=x", "out:kk=1", "out:k=1,atol=2",
                          "out:rule=exact", "out:local=2", "nosuch:k=3", "v3.out:k=1"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_policy_override(bad), Error);
  }
}

TEST_CASE("a folder diff matches cases by id, fails missing ones and notes strays") {
  TempDir golden_dir, actual_dir;
  golden::GoldenRunOptions o;
  o.out_dir = golden_dir.path();
  golden::run_golden({small(0), small(1), small(2)}, o);
  // The vendor ran two of the three cases: one right, one with a wrong `out`; plus a stray file.
  const auto g0 = golden::make_golden(small(0));
  const auto g1 = golden::make_golden(small(1));
  write_safetensors(actual_dir.path() / (small(0).id + ".safetensors"), {{"out", g0.find("v1.out")->view()}});
  Tensor bad = Tensor::copy_of(g1.find("v2.out")->view());
  bad.set({1, 1, 7}, 1.0);
  write_safetensors(actual_dir.path() / (small(1).id + ".safetensors"),
                    {{"out", bad}, {"query", g1.find("query")->view()}, {"junk", bad}});
  write_safetensors(actual_dir.path() / "stray.safetensors", {{"out", bad}});

  const DiffReport r = diff_paths(golden_dir.path(), actual_dir.path(), {});
  REQUIRE(r.cases.size() == 3);
  CHECK(r.passed() == 1);
  CHECK(r.failed() == 2);
  CHECK(r.cases[0].passed());
  CHECK(r.cases[1].tensors.size() == 1);
  CHECK(r.cases[1].notes.size() == 1);  // junk is ignored with a note; query silently
  CHECK(r.cases[1].notes[0].find("'junk'") != std::string::npos);
  CHECK(r.cases[2].error.find("no outputs for this case") != std::string::npos);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("stray.safetensors") != std::string::npos);

  const std::string text = render_text(r);
  CHECK(last_line(text) ==
        "1 passed, 2 failed (tensors); cases: 1 of 3 pass, 2 fail; not compared: 6 tensor(s) ACTUAL lacks "
        "(v2.tmp_out, v2.max_logits, v2.exp_sums)");
  CHECK(text.find("worst abs") != std::string::npos);
  CHECK(text.find("seq 1, head 1, dim 7") != std::string::npos);

  const auto json = nlohmann::json::parse(render_json(r));
  CHECK(json.at("passed") == 1);
  CHECK(json.at("failed") == 2);
  REQUIRE(json.at("tensors").size() == 2);
  const auto& t = json.at("tensors")[1];
  CHECK(t.at("name") == "out");
  CHECK(t.at("status") == "FAIL");
  CHECK(t.at("case_id") == small(1).id);
  CHECK(t.at("worst").at("seq") == 1);
  CHECK(t.at("worst").at("head") == 1);
  CHECK(t.at("worst").at("dim") == 7);
  CHECK(t.at("pattern") == "scattered");
  CHECK(json.at("cases")[2].at("status") == "FAIL");

  const std::string junit = render_junit(r);
  CHECK(junit.find("<testsuites name=\"pao diff\" tests=\"3\" failures=\"2\">") != std::string::npos);
  CHECK(junit.find("<failure message=\"scattered\">") != std::string::npos);

  // The golden folder against itself passes, every tensor of every case.
  const DiffReport self = diff_paths(golden_dir.path(), golden_dir.path(), {});
  CHECK(self.failed() == 0);
  CHECK(self.passed() == 3 * 6);
  CHECK(self.notes.empty());
}

TEST_CASE("partials get a location with partition, tokens and blocks") {
  TempDir dir;
  const auto c = small(0);
  const auto g = golden::make_golden(c);
  write_safetensors(dir.path() / "g.safetensors", g.views(), g.metadata);
  Tensor ml = Tensor::copy_of(g.find("v2.max_logits")->view());
  ml.set({1, 0, 2}, ml.at({1, 0, 2}) + 1.0);
  write_safetensors(dir.path() / "a.safetensors", {{"max_logits", ml}});
  const CaseReport r = diff_case(dir.path() / "g.safetensors", dir.path() / "a.safetensors", {});
  REQUIRE(r.tensors.size() == 2);  // and the absent final output
  const TensorReport& t = r.tensors[0];
  CHECK(t.name == "v2.max_logits");
  CHECK(t.actual_name == "max_logits");
  CHECK_FALSE(t.passed);
  CHECK(t.excluded == 2 * 1);  // seq 0 (20 tokens) has 2 of the 3 partitions
  const std::string where = describe(t.worst_abs->location);
  CHECK(where.find("seq 1, head 0, partition 2 (tokens 32..39, logical block 2 -> physical ") == 0);
  CHECK(t.verdict.pattern == Pattern::single_block);
}

TEST_CASE("the bitwise rule: a port of the oracle's arithmetic, judged in memory") {
  // What pao-cuda-check does with a GPU run: a golden made in memory, the outputs in memory.
  auto g = golden::make_golden(small(3));
  const Tensor v1 = Tensor::copy_of(g.find("v1.out")->view());
  Tensor tmp = Tensor::copy_of(g.find("v2.tmp_out")->view());
  const golden::TensorFile golden_file = golden::TensorFile::in_memory("g", g.metadata, std::move(g.tensors));
  const auto actual = [&] {
    std::vector<std::pair<std::string, Tensor>> outputs;
    outputs.emplace_back("v1.out", Tensor::copy_of(v1.view()));
    outputs.emplace_back("tmp_out", Tensor::copy_of(tmp.view()));
    return golden::TensorFile::in_memory("a", {}, std::move(outputs));
  };
  const DiffOptions bitwise = with_policy(parse_policy_override("*:rule=bitwise"));
  const CaseReport same = diff_case(golden_file, actual(), bitwise);
  REQUIRE(same.tensors.size() == 2);
  for (const auto& t : same.tensors) {
    CHECK(t.passed);
    CHECK(t.policy.rule == Rule::bitwise);
    CHECK(t.compared > 0);
  }
  CHECK(same.tensors[0].reference == "v1.out of the golden");
  // One element one f16 ulp off: the default rule allows it, the bitwise rule names it.
  std::uint16_t* bits = tmp.data<std::uint16_t>();
  const std::int64_t flat = ((1 * 2 + 1) * 3 + 1) * 32 + 7;  // [1, 1, 1, 7]: seq 1 has 3 partitions
  bits[flat] = static_cast<std::uint16_t>(bits[flat] + 1);
  const CaseReport flipped = diff_case(golden_file, actual(), bitwise);
  const TensorReport& t = flipped.tensors.at(1);
  CHECK(t.name == "v2.tmp_out");
  CHECK_FALSE(t.passed);
  CHECK(t.mismatched == 1);
  REQUIRE(t.worst_abs);
  CHECK(t.worst_abs->location.index == Shape{1, 1, 1, 7});
  CHECK(render_tensor_text(t).find("bitwise: 1 of ") != std::string::npos);
  CHECK(diff_case(golden_file, actual(), {}).passed());
  CHECK_THROWS_WITH_AS(parse_policy_override("out:rule=bitwize"),
                       doctest::Contains("expected flash, elementwise, nmse or bitwise"), Error);
}

TEST_CASE("bad ACTUALs: nothing to compare is an error; a wrong shape fails its tensor") {
  TempDir dir;
  const auto g = golden::make_golden(small(0));
  write_safetensors(dir.path() / "g.safetensors", g.views(), g.metadata);
  write_safetensors(dir.path() / "none.safetensors", {{"output_tensor", g.find("out")->view()}});
  CHECK_THROWS_WITH_AS(diff_case(dir.path() / "g.safetensors", dir.path() / "none.safetensors", {}),
                       doctest::Contains("holds none of the outputs"), Error);
  write_safetensors(dir.path() / "shape.safetensors", {{"out", g.find("v2.tmp_out")->view()}});
  const CaseReport r = diff_case(dir.path() / "g.safetensors", dir.path() / "shape.safetensors", {});
  REQUIRE(r.tensors.size() == 1);
  CHECK_FALSE(r.tensors[0].passed);
  CHECK(r.tensors[0].problem.find("differs from the golden's [2, 2, 32]") != std::string::npos);
  // The partials are judged against the exact V2's, recomputed from the golden's inputs.
  write_safetensors(dir.path() / "tmp.safetensors", {{"v2.tmp_out", g.find("v2.tmp_out")->view()}});
  const CaseReport partial = diff_case(dir.path() / "g.safetensors", dir.path() / "tmp.safetensors",
                                       with_policy(parse_policy_override("v2.tmp_out:k=2")));
  REQUIRE(partial.tensors.size() == 2);
  CHECK(partial.tensors[0].passed);
  CHECK(partial.tensors[0].reference.find("exact V2") != std::string::npos);
  // ... and the final output it lacks fails: intermediates alone never pass a case.
  CHECK_FALSE(partial.passed());
  CHECK(partial.tensors[1].name == "out");
  CHECK(partial.tensors[1].problem.find("absent from ACTUAL: no final output (out, v1.out, v2.out)") !=
        std::string::npos);
  CHECK(partial.compared_count() == 1);
  CHECK(partial.not_compared == std::vector<std::string>{"v2.max_logits", "v2.exp_sums"});
  // A vendor's npy folder (f32 copies of a f16 output) works too.
  fs::create_directories(dir.path() / "npy");
  Tensor as_f32(DType::f32, g.find("v2.out")->shape());
  const auto values = g.find("v2.out")->to_f64();
  for (std::size_t i = 0; i < values.size(); ++i) as_f32.data<float>()[i] = static_cast<float>(values[i]);
  write_npy(dir.path() / "npy" / "v2.out.npy", as_f32);
  // ... as values only when asked: another dtype than the golden's fails by default.
  const DiffReport strict = diff_paths(dir.path() / "g.safetensors", dir.path() / "npy", {});
  REQUIRE(strict.cases.size() == 1);
  CHECK(strict.failed() == 1);
  CHECK(strict.cases[0].tensors.at(0).problem.find("dtype f32 differs from the golden's f16") !=
        std::string::npos);
  DiffOptions allow;
  allow.allow_dtype_mismatch = true;
  const DiffReport npy = diff_paths(dir.path() / "g.safetensors", dir.path() / "npy", allow);
  REQUIRE(npy.cases.size() == 1);
  CHECK(npy.failed() == 0);
  CHECK(npy.cases[0].notes.at(0).find("ACTUAL's dtype is f32") != std::string::npos);
  // nmse on request.
  const CaseReport n = diff_case(dir.path() / "g.safetensors", dir.path() / "shape.safetensors",
                                 with_policy(parse_policy_override("out:nmse=1e-3")));
  CHECK(n.tensors[0].policy.rule == Rule::nmse);
}

TEST_CASE("part of a suite: --cases, --allow-missing, and a vendor's <id>.error") {
  TempDir dir;
  golden::GoldenRunOptions o;
  o.out_dir = dir.path() / "goldens";
  const auto c1 = cases::parse_case(
      R"({"id": "d1", "num_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [9]})", "1");
  const auto c2 = cases::parse_case(
      R"({"id": "d2", "num_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40]})", "2");
  const auto c3 =
      cases::parse_case(R"({"id": "p3", "kernel": "prefix", "num_heads": 2, "head_size": 32, "dtype": "f16",
                                        "query_lens": [3], "seq_lens": [9]})",
                        "3");
  REQUIRE(golden::run_golden({c1, c2, c3}, o).written == 3);
  const fs::path vendor = dir.path() / "vendor";
  fs::create_directories(vendor);
  {
    const golden::GoldenTensors g = golden::make_golden(c1);
    write_safetensors(vendor / "d1.safetensors", {{"out", g.find("v2.out")->view()}});
  }
  { std::ofstream(vendor / "d2.error") << "head_size 32 unsupported\n"; }

  DiffOptions only_decode;
  only_decode.cases_glob = "d*";
  DiffReport r = diff_paths(o.out_dir, vendor, only_decode);
  REQUIRE(r.cases.size() == 2);  // p3 is not asked about
  CHECK(r.cases[0].passed());
  CHECK(r.cases[1].error == "the vendor could not run this case (d2.error): head_size 32 unsupported");
  CHECK(r.failed() == 1);

  DiffOptions missing;
  missing.allow_missing = true;
  r = diff_paths(o.out_dir, vendor, missing);
  REQUIRE(r.cases.size() == 3);
  CHECK(r.cases[2].not_run);
  CHECK(r.not_run() == 1);
  CHECK(r.failed() == 1);  // d2's error still fails: the vendor could not run it
  CHECK(render_text(r, {}).find("p3  NOT RUN") != std::string::npos);
  CHECK(
      summary_line(r) ==
      "1 passed, 1 failed (tensors); cases: 1 of 3 pass, 1 fail, 1 not run; not compared: 3 tensor(s) ACTUAL "
      "lacks (v2.tmp_out, v2.max_logits, v2.exp_sums)");
  CHECK(render_json(r).find("\"not_run\": 1") != std::string::npos);

  DiffOptions none;
  none.cases_glob = "x*";
  CHECK_THROWS_WITH_AS(diff_paths(o.out_dir, vendor, none), doctest::Contains("matches none of the 3 cases"),
                       Error);
}

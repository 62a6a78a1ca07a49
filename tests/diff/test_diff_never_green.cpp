// `pao diff` and `pao verify` never pass on nothing: a required output that is absent fails, what
// was not compared is counted, a run that compared no tensor is not a pass, and a golden folder
// that lacks cases of its suite (a killed run, a shard not yet run) is refused — also when its
// shards write into one folder without merging their manifests.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/diff/report.hpp"
#include "pao/golden/folder.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/run.hpp"
#include "pao/io/output_path.hpp"
#include "pao/io/safetensors.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

cases::Case decode_case(const std::string& id, int seq_len) {
  return cases::parse_case(R"({"id": ")" + id + R"(", "num_heads": 2, "head_size": 32, "dtype": "f16",
                                "partition_size": 16, "seq_lens": [)" +
                               std::to_string(seq_len) + "]}",
                           id);
}

std::vector<cases::Case> four_cases() {
  return {decode_case("c0", 9), decode_case("c1", 20), decode_case("c2", 33), decode_case("c3", 40)};
}

std::vector<std::string> ids_of(const std::vector<cases::Case>& cases) {
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  return ids;
}

/// A suite of four cases written into `dir` as a suite run would (suite "four").
void write_suite(const fs::path& dir, const std::vector<cases::Case>& cases,
                 std::optional<cases::Shard> shard = std::nullopt) {
  golden::GoldenRunOptions o;
  o.out_dir = dir;
  o.suite = "four";
  o.shard = shard;
  o.suite_cases = ids_of(four_cases());
  golden::run_golden(cases, o);
}

/// Edits DIR/manifest.json as a JSON object.
template <typename Edit>
void edit_manifest(const fs::path& dir, Edit edit) {
  nlohmann::json j;
  std::ifstream(dir / "manifest.json") >> j;
  edit(j);
  std::ofstream(dir / "manifest.json") << j.dump(1);
}

/// The oracle's v2.out of a case under the vendor name `out`, into vendor/<id>.safetensors.
void write_vendor_out(const fs::path& vendor, const cases::Case& c) {
  fs::create_directories(vendor);
  const golden::GoldenTensors g = golden::make_golden(c);
  write_safetensors(vendor / (c.id + ".safetensors"), {{"out", g.find("v2.out")->view()}});
}

}  // namespace

TEST_CASE("a cache write with only key_cache fails: the value cache's write was not checked") {
  test::TempDir dir;
  const cases::Case c =
      cases::parse_case(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 32,
      "dtype": "f16", "query_lens": [5, 3], "seq_lens": [9, 3], "seed": 4})",
                        "reshape");
  const golden::GoldenTensors g = golden::make_golden(c);
  write_safetensors(dir.path() / "g.safetensors", g.views(), g.metadata);
  // The golden's own caches after the write: a correct key cache.
  write_safetensors(dir.path() / "key_only.safetensors", {{"key_cache", g.find("key_cache")->view()}});
  const CaseReport r = diff_case(dir.path() / "g.safetensors", dir.path() / "key_only.safetensors", {});
  REQUIRE(r.tensors.size() == 2);
  CHECK(r.tensors[0].name == "key_cache");
  CHECK(r.tensors[0].passed);
  CHECK(r.tensors[1].name == "value_cache");
  CHECK_FALSE(r.tensors[1].passed);
  CHECK(r.tensors[1].problem ==
        "absent from ACTUAL: the value cache's write was not checked: a cache write writes both caches");
  CHECK_FALSE(r.passed());
  CHECK(r.compared_count() == 1);
  // Both caches: a pass.
  write_safetensors(dir.path() / "both.safetensors", {{"key_cache", g.find("key_cache")->view()},
                                                      {"value_cache", g.find("value_cache")->view()}});
  CHECK(diff_case(dir.path() / "g.safetensors", dir.path() / "both.safetensors", {}).passed());
}

TEST_CASE("a vendor's V1 output alone: V2's out and the partials are counted as not compared") {
  test::TempDir dir;
  const cases::Case c = decode_case("v1only", 40);
  const golden::GoldenTensors g = golden::make_golden(c);
  write_safetensors(dir.path() / "g.safetensors", g.views(), g.metadata);
  write_safetensors(dir.path() / "v1.safetensors", {{"v1.out", g.find("v1.out")->view()}});
  DiffReport r = diff_paths(dir.path() / "g.safetensors", dir.path() / "v1.safetensors", {});
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].passed());
  CHECK(r.cases[0].not_compared ==
        std::vector<std::string>{"v2.out", "v2.tmp_out", "v2.max_logits", "v2.exp_sums"});
  CHECK(summary_line(r) ==
        "1 passed, 0 failed; not compared: 4 tensor(s) ACTUAL lacks (v2.out, v2.tmp_out, v2.max_logits, "
        "v2.exp_sums)");
  CHECK(render_text(r, {}).find("not compared (ACTUAL lacks them; the verdict is without them): v2.out, "
                                "v2.tmp_out") != std::string::npos);
  const auto j = nlohmann::json::parse(render_json(r));
  CHECK(j["compared"] == 1);
  CHECK(j["not_compared"] == 4);
  CHECK(j["cases"][0]["not_compared"].size() == 4);
}

TEST_CASE("--allow-missing with every case missing compares nothing, and says it is not a pass") {
  test::TempDir dir;
  write_suite(dir.path() / "g", four_cases());
  fs::create_directories(dir.path() / "empty");
  DiffOptions allow;
  allow.allow_missing = true;
  const DiffReport r = diff_paths(dir.path() / "g", dir.path() / "empty", allow);
  CHECK(r.not_run() == 4);
  CHECK(r.failed() == 0);
  CHECK(r.compared() == 0);
  CHECK(summary_line(r) ==
        "0 passed, 0 failed (tensors); cases: 0 of 4 pass, 0 fail, 4 not run; nothing was compared, which is "
        "not a pass");
}

TEST_CASE("a stale <id>.error beside the case's outputs is named, not ignored silently") {
  test::TempDir dir;
  const auto cases = four_cases();
  write_suite(dir.path() / "g", cases);
  for (const auto& c : cases) write_vendor_out(dir.path() / "vendor", c);
  std::ofstream(dir.path() / "vendor" / "c1.error") << "CUDA error: out of memory\nat launch 3\n";
  const DiffReport r = diff_paths(dir.path() / "g", dir.path() / "vendor", {});
  CHECK(r.failed() == 0);
  REQUIRE(r.cases.size() == 4);
  REQUIRE(r.cases[1].notes.size() == 1);
  CHECK(r.cases[1].notes[0] ==
        "ACTUAL also holds c1.error (\"CUDA error: out of memory\"), ignored: the case's outputs were "
        "compared. "
        "Remove it if it is stale, or the outputs if the kernel failed after writing them");
  CHECK(r.cases[0].notes.empty());
  CHECK(r.notes.empty());  // c1.error matched a case: not an unmatched ACTUAL file
}

TEST_CASE(
    "a golden folder cut short is refused, naming the missing cases and the command that completes it") {
  test::TempDir dir;
  const fs::path g = dir.path() / "g";
  const auto cases = four_cases();
  write_suite(g, cases);
  CHECK(golden::read_manifest(g / "manifest.json").suite_cases == ids_of(cases));
  for (const auto& c : cases) write_vendor_out(dir.path() / "vendor", c);
  CHECK(diff_paths(g, dir.path() / "vendor", {}).failed() == 0);

  // A run killed after two cases: the manifest (rewritten after each case) lists two, and knows four.
  edit_manifest(g, [](nlohmann::json& j) { j["cases"].erase(j["cases"].begin() + 2, j["cases"].end()); });
  fs::remove(g / "c2.safetensors");
  fs::remove(g / "c3.safetensors");
  const std::string want =
      (g.string() + ": incomplete: 2 of the 4 cases of suite 'four' are missing (c2, c3)");
  CHECK_THROWS_WITH_AS(diff_paths(g, dir.path() / "vendor", {}), doctest::Contains(want.c_str()), Error);
  CHECK_THROWS_WITH_AS(
      diff_paths(g, dir.path() / "vendor", {}),
      doctest::Contains(("Complete it with: pao golden --suite four --out " + g.string()).c_str()), Error);
  CHECK_THROWS_WITH_AS(golden::require_complete(golden::list_goldens(g)), doctest::Contains(want.c_str()),
                       Error);
  // A subset on purpose: what it asks for is there.
  DiffOptions subset;
  subset.cases_glob = "c[01]";
  CHECK(diff_paths(g, dir.path() / "vendor", subset).cases.size() == 2);
  subset.cases_glob = "c[12]";  // asks for c2, which is missing
  CHECK_THROWS_WITH_AS(diff_paths(g, dir.path() / "vendor", subset),
                       doctest::Contains("incomplete: 1 of the 4 cases of suite 'four' are missing (c2)"),
                       Error);
  // The run resumes: only the missing cases are computed, and the folder is whole again.
  golden::GoldenRunOptions o;
  o.out_dir = g;
  o.suite = "four";
  const golden::GoldenRunResult resumed = golden::run_golden(cases, o);
  CHECK(resumed.written == 2);
  CHECK(resumed.skipped == 2);
  CHECK(diff_paths(g, dir.path() / "vendor", {}).cases.size() == 4);
}

TEST_CASE("a manifest edited to list no case is refused; without its suite's list it compares nothing") {
  test::TempDir dir;
  const fs::path g = dir.path() / "g";
  write_suite(g, four_cases());
  for (const auto& c : four_cases()) write_vendor_out(dir.path() / "vendor", c);
  edit_manifest(g, [](nlohmann::json& j) { j["cases"] = nlohmann::json::array(); });
  CHECK_THROWS_WITH_AS(diff_paths(g, dir.path() / "vendor", {}),
                       doctest::Contains("incomplete: 4 of the 4 cases of suite 'four' are missing"), Error);
  // An older manifest (no suite_cases) cut to nothing: no case, no tensor compared — never a pass.
  edit_manifest(g, [](nlohmann::json& j) { j.erase("suite_cases"); });
  const DiffReport r = diff_paths(g, dir.path() / "vendor", {});
  CHECK(r.cases.empty());
  CHECK(r.compared() == 0);
  CHECK(summary_line(r).find("nothing was compared, which is not a pass") != std::string::npos);
  REQUIRE_FALSE(r.notes.empty());
  CHECK(
      r.notes[0].find("whether every case of its suite is there is not known: its manifest does not list") !=
      std::string::npos);
}

TEST_CASE("shards writing into one folder: their union is read without merging, and a missing shard named") {
  test::TempDir dir;
  const fs::path g = dir.path() / "g";
  const auto all = four_cases();
  for (std::int32_t i : {0, 2}) write_suite(g, cases::select_shard(all, {i, 3}), cases::Shard{i, 3});
  golden::GoldenFolder folder = golden::list_goldens(g);
  CHECK(folder.cases.size() == 3);  // c0, c3 (shard 0) and c2 (shard 2)
  REQUIRE(folder.missing.size() == 1);
  CHECK(folder.missing[0].id == "c1");
  CHECK(folder.missing[0].command == "pao golden --suite four --shard 1/3 --out " + g.string());
  CHECK_THROWS_WITH_AS(golden::require_complete(folder),
                       doctest::Contains("Complete it with: pao golden --suite four --shard 1/3"), Error);
  write_suite(g, cases::select_shard(all, {1, 3}), cases::Shard{1, 3});
  folder = golden::list_goldens(g);
  CHECK(folder.missing.empty());
  CHECK(folder.cases.size() == 4);
  golden::require_complete(folder);
  for (const auto& c : all) write_vendor_out(dir.path() / "vendor", c);
  CHECK(diff_paths(g, dir.path() / "vendor", {}).passed() == 4);
  // Merging writes manifest.json, which then answers alone, as complete.
  golden::merge_shard_manifests(g);
  CHECK(golden::list_goldens(g).missing.empty());
  CHECK(golden::read_manifest(g / "manifest.json").suite_cases == ids_of(all));
}

TEST_CASE("--shard auto: Slurm job arrays and Kubernetes Indexed Jobs") {
  using cases::shard_from_environment;
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  auto shard = shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}));
  CHECK((shard.index == 2 && shard.count == 3));
  // --array=1-3: task ids 1..3 are shards 0..2.
  shard = shard_from_environment(
      env({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "3"}}));
  CHECK((shard.index == 0 && shard.count == 3));
  shard = shard_from_environment(env({{"JOB_COMPLETION_INDEX", "4"}, {"PAO_SHARD_COUNT", "8"}}));
  CHECK((shard.index == 4 && shard.count == 8));
  CHECK_THROWS_WITH_AS(shard_from_environment(env({})), doctest::Contains("no job array in the environment"),
                       Error);
  CHECK_THROWS_WITH_AS(shard_from_environment(env({{"JOB_COMPLETION_INDEX", "4"}})),
                       doctest::Contains("PAO_SHARD_COUNT is not"), Error);
  CHECK_THROWS_WITH_AS(
      shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}})),
      doctest::Contains("gives shard 3 of 3, outside 0 <= i < N"), Error);
  CHECK_THROWS_WITH_AS(
      shard_from_environment(env(
          {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_STEP", "2"}})),
      doctest::Contains("SLURM_ARRAY_TASK_STEP = 2"), Error);
  CHECK_THROWS_WITH_AS(shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "x"}})),
                       doctest::Contains("SLURM_ARRAY_TASK_ID = 'x' is not an integer"), Error);
  CHECK_THROWS_WITH_AS(shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "0"}})),
                       doctest::Contains("neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MIN/MAX"),
                       Error);
}

// Issue 41: a vendor file with an extra tensor of a dtype pao does not read (I16, BOOL) failed its
// case; a file that could not even be examined (a symlink loop) aborted the whole run; shards 0..3 of
// 1000 over a four-case suite were read as complete.
namespace {

/// A safetensors file of `out` and extra tensors of other dtypes, its header written by hand (pao's
/// writer writes only the dtypes pao reads). Each extra is {name, dtype, bytes}.
void write_with_extras(const fs::path& path, const Tensor& out,
                       const std::vector<std::tuple<std::string, std::string, std::size_t>>& extras) {
  nlohmann::json header;
  std::string data(reinterpret_cast<const char*>(out.bytes()), out.nbytes());
  header["out"] = {{"dtype", "F16"}, {"shape", out.shape()}, {"data_offsets", {0, data.size()}}};
  for (const auto& [name, dtype, bytes] : extras) {
    header[name] = {
        {"dtype", dtype}, {"shape", {bytes}}, {"data_offsets", {data.size(), data.size() + bytes}}};
    if (dtype == "I16" || dtype == "U16") header[name]["shape"] = {bytes / 2};
    if (dtype == "F4") header[name]["shape"] = {bytes * 2};  // two to a byte
    data += std::string(bytes, '\1');
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream f(path, std::ios::binary);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xFF));
  f << text << data;
}

}  // namespace

TEST_CASE("extra tensors of any dtype beside a correct out are ignored with a note") {
  test::TempDir dir;
  const cases::Case c = decode_case("x", 20);
  const golden::GoldenTensors g = golden::make_golden(c);
  write_safetensors(dir.path() / "x.safetensors", g.views(), g.metadata);
  const Tensor& out = *g.find("v2.out");
  const std::vector<std::vector<std::tuple<std::string, std::string, std::size_t>>> extras = {
      {{"mask", "BOOL", 5}},
      {{"idx", "I16", 8}},
      {{"idx", "U16", 4}, {"flags", "BOOL", 3}, {"lut", "F8_E8M0", 2}, {"packed", "F4", 4}},
      {{"idx", "I8", 4}},  // a dtype pao reads: ignored the same way
  };
  for (const auto& e : extras) {
    INFO(std::get<0>(e.front()), " ", std::get<1>(e.front()));
    write_with_extras(dir.path() / "v.safetensors", out, e);
    const CaseReport r = diff_case(dir.path() / "x.safetensors", dir.path() / "v.safetensors", {});
    CHECK(r.error.empty());
    CHECK(r.passed());
    CHECK(r.compared_count() == 1);
    for (const auto& [name, dtype, bytes] : e) {
      bool noted = false;
      for (const auto& n : r.notes) noted = noted || n.starts_with("ignored '" + name + "'");
      CHECK_MESSAGE(noted, name);
    }
  }
  // Only a tensor that is read must have a dtype pao reads: an I16 `out` is refused, naming it.
  {
    nlohmann::json header;
    header["out"] = {{"dtype", "I16"}, {"shape", out.shape()}, {"data_offsets", {0, out.nbytes()}}};
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::ofstream f(dir.path() / "i16out.safetensors", std::ios::binary);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xFF));
    f << text << std::string(reinterpret_cast<const char*>(out.bytes()), out.nbytes());
  }
  CHECK_THROWS_WITH_AS(diff_case(dir.path() / "x.safetensors", dir.path() / "i16out.safetensors", {}),
                       doctest::Contains("tensor 'out': unknown dtype: safetensors dtype 'I16'"), Error);
}

TEST_CASE("a vendor file that cannot be examined fails its case, not the run") {
  test::TempDir dir;
  const fs::path g = dir.path() / "g";
  write_suite(g, four_cases());
  for (const auto& c : four_cases()) write_vendor_out(dir.path() / "vendor", c);
  fs::remove(dir.path() / "vendor" / "c1.safetensors");
  fs::create_symlink("c1.safetensors", dir.path() / "vendor" / "c1.safetensors");  // a loop
  fs::create_symlink("stray.safetensors", dir.path() / "vendor" / "stray.safetensors");
  const DiffReport r = diff_paths(g, dir.path() / "vendor", {});
  REQUIRE(r.cases.size() == 4);
  CHECK(r.passed() == 3);
  CHECK(r.cases[1].case_id == "c1");
  CHECK(r.cases[1].error.find("c1.safetensors: cannot read: Too many levels of symbolic links") !=
        std::string::npos);
  bool stray = false;
  for (const auto& n : r.notes)
    stray = stray || n.find("stray.safetensors matches no golden case") != std::string::npos;
  CHECK(stray);
}

TEST_CASE("shards read as one are complete only when every shard has its manifest") {
  const auto all = four_cases();
  SUBCASE("shards 0..3 of 1000 hold every case, and 996 shards never ran") {
    test::TempDir dir;
    const fs::path g = dir.path() / "g";
    for (std::int32_t i = 0; i < 4; ++i)
      write_suite(g, cases::select_shard(all, {i, 1000}), cases::Shard{i, 1000});
    const golden::GoldenFolder folder = golden::list_goldens(g);
    CHECK(folder.missing.empty());  // every case is there...
    CHECK(folder.missing_shard_count == 996);
    const std::string says = "incomplete: 996 of its 1000 shards have no manifest (shards 4-999)";
    CHECK_THROWS_WITH_AS(golden::require_complete(folder), doctest::Contains(says.c_str()), Error);
    CHECK_THROWS_WITH_AS(golden::require_complete(folder),
                         doctest::Contains("its suite has 4 cases, so shards 4 and up hold none"), Error);
    for (const auto& c : all) write_vendor_out(dir.path() / "vendor", c);
    CHECK_THROWS_WITH_AS(diff_paths(g, dir.path() / "vendor", {}), doctest::Contains(says.c_str()), Error);
    // --cases diffs a subset on purpose: the cases it selects are all there.
    DiffOptions subset;
    subset.cases_glob = "c*";
    CHECK(diff_paths(g, dir.path() / "vendor", subset).passed() == 4);
  }
  SUBCASE("an empty shard's manifest counts: 6 shards of 4 cases, all run, are complete") {
    test::TempDir dir;
    const fs::path g = dir.path() / "g";
    for (std::int32_t i = 0; i < 6; ++i) write_suite(g, cases::select_shard(all, {i, 6}), cases::Shard{i, 6});
    golden::require_complete(golden::list_goldens(g));
    fs::remove(g / "manifest-shard-5-of-6.json");  // a shard that holds no case, never run
    const std::string message = [&] {
      try {
        golden::require_complete(golden::list_goldens(g));
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();
    }();
    CHECK(message.find("1 of its 6 shards have no manifest (shards 5)") != std::string::npos);
    CHECK(message.find("--shard 5/6") != std::string::npos);
    CHECK(message.size() < 600);
  }
  CHECK(cases::shard_ranges_text(cases::missing_shard_ranges({0, 2, 3, 7}, 10)) == "1, 4-6, 8-9");
  CHECK(cases::shard_ranges_text(cases::missing_shard_ranges({1}, 2000000000)) == "0, 2-1999999999");
  CHECK(cases::shard_ranges_text({{0, 0}, {2, 2}, {4, 4}, {6, 6}, {8, 8}}) == "0, 2, 4, 6, ... (5 ranges)");
  CHECK(cases::missing_shard_ranges({0, 1, 2}, 3).empty());
}

TEST_CASE(
    "no report over a golden file: a manifest file outside the folder is refused before anything is read") {
  test::TempDir dir;
  const fs::path g = dir.path() / "g";
  write_suite(g, {four_cases()[0]});
  write_vendor_out(dir.path() / "vendor", four_cases()[0]);
  fs::create_directories(dir.path() / "elsewhere");
  fs::copy(g / "c0.safetensors", dir.path() / "elsewhere" / "c0.safetensors");
  edit_manifest(g, [](nlohmann::json& j) { j["cases"][0]["file"] = "../elsewhere/c0.safetensors"; });
  CHECK_THROWS_WITH_AS(diff_paths(g, dir.path() / "vendor", {}),
                       doctest::Contains("leads outside the folder"), Error);
  // Without a manifest, the golden files a folder links to are what no output may be.
  const fs::path linked = dir.path() / "linked";
  fs::create_directories(linked);
  fs::create_symlink("../elsewhere/c0.safetensors", linked / "c0.safetensors");
  std::vector<InputPath> inputs{{"GOLDEN", linked}};
  for (const auto& f : golden::golden_input_files(linked)) inputs.push_back({"a golden file of GOLDEN", f});
  CHECK_THROWS_WITH_AS(
      refuse_output_over_input("--json", dir.path() / "elsewhere" / "c0.safetensors", inputs),
      doctest::Contains("that is a golden file of GOLDEN"), Error);
  CHECK_NOTHROW(refuse_output_over_input("--json", dir.path() / "report.json", inputs));
  CHECK(diff_paths(linked, dir.path() / "vendor", {}).failed() == 0);
}

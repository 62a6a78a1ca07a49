// Golden files and runs: the tensor contract and metadata of a golden, the manifest, resuming,
// regenerating a damaged golden, shards and their merge, and the npy format.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/run.hpp"
#include "pao/io/sha256.hpp"
#include "pao/numerics/element.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::golden;
using namespace pao::cases;
namespace fs = std::filesystem;

namespace {

using TempDir = test::TempDir;

cases::Case tiny(const std::string& extra = "") {
  return parse_case(
      R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32,
                        "seq_lens": [40, 7])" +
          extra + "}",
      "tiny");
}

const char* kSuite = R"({"suite": "t", "grids": [{
    "fixed": {"num_heads": 2, "head_size": 32, "seq_lens": [20, 33], "partition_size": 16},
    "axes": {"dtype": ["f16", "bf16", "f32"], "kv_cache_dtype": ["auto", "fp8_e5m2"]}}]})";

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

bool has_temporaries(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().starts_with(".")) return true;
  return false;
}

}  // namespace

TEST_CASE("a decode golden holds the tensor contract and the case in its metadata") {
  const cases::Case c = tiny(R"(, "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "alibi": true)");
  const GoldenTensors g = make_golden(c);
  for (const char* name :
       {"query", "key_cache", "value_cache", "block_tables", "seq_lens", "alibi_slopes", "out", "out_exact",
        "v1.out", "v2.out", "v2.tmp_out", "v2.max_logits", "v2.exp_sums"}) {
    INFO(name);
    CHECK(g.find(name) != nullptr);
  }
  CHECK(g.find("key_cache")->dtype() == DType::fp8_e4m3);
  CHECK(g.find("out_exact")->dtype() == DType::f64);
  CHECK(g.find("out")->dtype() == DType::f16);
  CHECK(g.find("v2.tmp_out")->shape() == Shape{2, 4, 2, 32});
  CHECK(g.find("v2.max_logits")->dtype() == DType::f32);
  // `out` is out_exact rounded once to f16.
  const auto exact = g.find("out_exact")->to_f64();
  const auto out = g.find("out")->to_f64();
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == round_to_dtype(DType::f16, exact[i]));
  const auto& m = g.metadata;
  CHECK(m.at("case") == case_to_json(c));
  CHECK(m.at("case_id") == c.id);
  CHECK(m.at("pao_version") == PAO_VERSION);
  CHECK(m.at("fp8_format") == "e4m3fn");
  CHECK(m.at("k_scale") == "0.5");
  CHECK(m.at("v_scale") == "1");
  CHECK(m.at("scale") == format_f32(effective_scale(c)));
  CHECK(m.at("seq_lens") == "40,7");
  CHECK(m.at("max_num_partitions") == "2");
  CHECK(m.at("seed") == "0");
  CHECK(m.at("inputs") == "query,key_cache,value_cache,block_tables,seq_lens,alibi_slopes");
  CHECK(parse_case(m.at("case"), "metadata") == c);
}

TEST_CASE("a decode golden whose sequences are all empty: one partition, past every end") {
  // The metadata said max_num_partitions 0 beside a tmp_out of 1 partition before the plan's
  // partition arithmetic was the only one (pao/plan/partition.hpp).
  const cases::Case c = parse_case(R"({"num_heads": 2, "num_kv_heads": 1, "head_size": 64, "dtype": "f16",
      "seq_lens": [0, 0]})",
                                   "all empty");
  const GoldenTensors g = make_golden(c);
  CHECK(g.metadata.at("max_num_partitions") == "1");
  CHECK(g.find("v2.tmp_out")->shape() == Shape{2, 2, 1, 64});
  CHECK(g.find("v2.max_logits")->shape() == Shape{2, 2, 1});
  for (double v : g.find("v2.max_logits")->to_f64()) CHECK(v == -std::numeric_limits<double>::infinity());
  for (double v : g.find("v2.exp_sums")->to_f64()) CHECK(v == 0.0);
  for (const char* out : {"out", "v1.out", "v2.out"})
    for (double v : g.find(out)->to_f64()) CHECK(v == 0.0);
  // Its metadata reads back (max_seq_len 0 was refused, so such a golden could not be diffed).
  CHECK(parse_case(g.metadata.at("case"), "metadata") == c);
}

TEST_CASE("the memory estimate covers every field that sizes an allocation, before make_golden allocates") {
  // Issue 41: padding_tokens, extra_table_columns and num_seqs were not in the estimate, so pao
  // golden ran into std::bad_alloc after minutes and GBs.
  const auto largest = [](const Case& c) {
    const auto terms = estimated_memory_terms(c);
    return std::max_element(terms.begin(), terms.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; })
        ->field;
  };
  const Case padding = parse_case(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 32,
      "dtype": "f16", "seq_lens": [20], "query_lens": [8], "padding_tokens": 2000000000})",
                                  "t.json");
  CHECK(largest(padding) == "padding_tokens");
  CHECK(estimated_peak_memory(padding) > 2 * 2e9 * 2 * 64 * 2);  // key and value rows, twice over
  const Case columns = parse_case(R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
      "extra_table_columns": 2147483647, "seq_lens": [17]})",
                                  "t.json");
  CHECK(largest(columns) == "extra_table_columns");
  CHECK(estimated_peak_memory(columns) > 2 * 2147483647.0 * 4);
  // Far more sequences than the int32 arithmetic of the pool holds: estimated in doubles.
  Case many = parse_case(R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
      "seq_lens": [17]})",
                         "t.json");
  many.seq_lens.assign(3000000, 1000000000);
  many.num_seqs = 3000000;
  CHECK(estimated_peak_memory(many) > 3e6 * 1e9 * 2 * 64 * 2);

  set_memory_limit("1G");
  for (const auto& [c, field] : {std::pair{&padding, "padding_tokens"}, {&columns, "extra_table_columns"}}) {
    INFO(c->id);
    CHECK_THROWS_WITH_AS(make_golden(*c),
                         doctest::Contains(("sized by its field '" + std::string(field) + "'").c_str()),
                         Error);
    CHECK_THROWS_WITH_AS(make_golden(*c), doctest::Contains(("lower its " + std::string(field)).c_str()),
                         Error);
  }
  set_memory_limit("");
  // An ordinary case is estimated at what it was, and built.
  CHECK(make_golden(tiny()).find("out") != nullptr);
}

TEST_CASE("a prefix golden holds key, value, query_start_loc and prefix.out") {
  const cases::Case c = parse_case(R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 32,
      "dtype": "bf16", "query_lens": [3, 1], "seq_lens": [20, 9]})",
                                   "tiny prefix");
  const GoldenTensors g = make_golden(c);
  for (const char* name : {"query", "key", "value", "key_cache", "value_cache", "block_tables", "seq_lens",
                           "query_start_loc", "out", "out_exact", "prefix.out"}) {
    INFO(name);
    CHECK(g.find(name) != nullptr);
  }
  CHECK(g.find("alibi_slopes") == nullptr);
  CHECK(g.find("v2.out") == nullptr);
  CHECK(g.find("prefix.out")->shape() == Shape{4, 4, 32});
  CHECK(g.metadata.at("query_lens") == "3,1");
  CHECK(g.metadata.at("inputs") ==
        "query,key,value,key_cache,value_cache,block_tables,seq_lens,query_start_loc");
}

TEST_CASE("run_golden writes a manifest, resumes, and regenerates a damaged golden") {
  TempDir dir;
  const std::vector<cases::Case> cases = {tiny(), tiny(R"(, "seed": 1)"), tiny(R"(, "dtype": "bf16")")};
  GoldenRunOptions o;
  o.out_dir = dir.path();
  std::vector<GoldenEvent::Kind> events;
  o.on_event = [&](const GoldenEvent& e) { events.push_back(e.kind); };
  GoldenRunResult r = run_golden(cases, o);
  CHECK(r.written == 3);
  CHECK(r.skipped == 0);
  CHECK(r.failures.empty());
  CHECK(r.manifest_path == dir.path() / "manifest.json");
  CHECK(std::count(events.begin(), events.end(), GoldenEvent::Kind::started) == 3);
  const Manifest m = read_manifest(r.manifest_path);
  REQUIRE(m.entries.size() == 3);
  for (const auto& c : cases) {
    const ManifestEntry* e = m.find(c.id);
    REQUIRE(e != nullptr);
    CHECK(e->file == c.id + ".safetensors");
    CHECK(e->sha256 == sha256_file_hex(dir.path() / e->file));
    CHECK(e->bytes == fs::file_size(dir.path() / e->file));
    CHECK(e->parameters == case_to_json(c));
    CHECK(e->pao_version == PAO_VERSION);
  }
  CHECK_FALSE(has_temporaries(dir.path()));

  r = run_golden(cases, o);
  CHECK(r.written == 0);
  CHECK(r.skipped == 3);

  // A damaged file is regenerated; so is a case whose parameters changed under the same id.
  { std::ofstream(dir.path() / (cases[1].id + ".safetensors"), std::ios::app) << "x"; }
  r = run_golden(cases, o);
  CHECK(r.written == 1);
  CHECK(r.skipped == 2);
  CHECK_FALSE(golden_hash_mismatch(dir.path(), *read_manifest(r.manifest_path).find(cases[1].id)));

  o.force = true;
  CHECK(run_golden(cases, o).written == 3);

  CHECK_THROWS_WITH_AS(run_golden({cases[0], cases[0]}, o), doctest::Contains("appears twice"), Error);
}

TEST_CASE("shard manifests merge into one") {
  TempDir dir;
  const auto cases = expand_suite_text(kSuite, "t.json", true);
  REQUIRE(cases.size() == 6);
  GoldenRunOptions o;
  o.out_dir = dir.path();
  o.suite = "t";
  o.full = true;
  o.shard = Shard{0, 2};
  CHECK(run_golden(select_shard(cases, *o.shard), o).manifest_path ==
        dir.path() / "manifest-shard-0-of-2.json");
  CHECK_THROWS_WITH_AS(merge_shard_manifests(dir.path()), doctest::Contains("shards 1 of 2 have no manifest"),
                       Error);
  o.shard = Shard{1, 2};
  run_golden(select_shard(cases, *o.shard), o);
  const Manifest merged = merge_shard_manifests(dir.path());
  CHECK(merged.entries.size() == 6);
  CHECK(merged.suite == "t");
  CHECK_FALSE(merged.shard.has_value());
  const Manifest reread = read_manifest(dir.path() / "manifest.json");
  CHECK(reread.entries.size() == 6);
  for (const auto& c : cases) CHECK(reread.find(c.id) != nullptr);
}

TEST_CASE("npy goldens: one folder per case, raw bits declared in meta.json") {
  TempDir dir;
  const cases::Case c = tiny(R"(, "dtype": "bf16", "kv_cache_dtype": "fp8_e5m2")");
  GoldenRunOptions o;
  o.out_dir = dir.path();
  o.format = GoldenFormat::npy;
  REQUIRE(run_golden({c}, o).written == 1);
  const fs::path folder = dir.path() / c.id;
  REQUIRE(fs::is_regular_file(folder / "meta.json"));
  REQUIRE(fs::is_regular_file(folder / "v2.tmp_out.npy"));
  std::ifstream in(folder / "meta.json");
  const auto meta = nlohmann::json::parse(in);
  CHECK(meta.at("case_id") == c.id);
  bool saw_raw = false;
  for (const auto& t : meta.at("tensors")) {
    if (t.at("name") == "key_cache") {
      CHECK(t.at("dtype") == "fp8_e5m2");
      CHECK(t.at("npy_descr") == "|u1");
      CHECK(t.at("raw_bits") == true);
      saw_raw = true;
    }
  }
  CHECK(saw_raw);

  const GoldenTensors g = make_golden(c);
  const TensorFile file = TensorFile::open(folder);
  CHECK(golden_case_of(file) == c);
  for (const auto& [name, tensor] : g.tensors) {
    INFO(name);
    CHECK(same_bytes(file.read(name), tensor));
  }
  CHECK(run_golden({c}, o).skipped == 1);
  { std::ofstream(folder / "query.npy", std::ios::app) << "x"; }
  CHECK(run_golden({c}, o).written == 1);
  CHECK_FALSE(has_temporaries(dir.path()));
}

TEST_CASE("a rerun removes what a killed run left; an unreadable manifest needs --force") {
  TempDir dir;
  const auto cases = expand_suite_text(kSuite, "t.json", false);
  GoldenRunOptions o;
  o.out_dir = dir.path();
  // A killed writer's temporaries (pid 2^22 + 1 is above Linux's pid_max default of 2^22): gone.
  // The temporaries of a live process (this one) stay.
  const std::string dead = std::to_string((1 << 22) + 1), alive = std::to_string(::getpid());
  { std::ofstream(dir.path() / (".a.safetensors.pao-tmp." + dead + ".0")) << "partial"; }
  fs::create_directories(dir.path() / (".b.pao-tmp-" + dead + "-3"));
  { std::ofstream(dir.path() / (".c.safetensors.pao-tmp." + alive + ".7")) << "in flight"; }
  GoldenRunResult r = run_golden({cases[0]}, o);
  CHECK(r.stale_temporaries_removed == 2);
  CHECK_FALSE(fs::exists(dir.path() / (".a.safetensors.pao-tmp." + dead + ".0")));
  CHECK(fs::exists(dir.path() / (".c.safetensors.pao-tmp." + alive + ".7")));
  fs::remove(dir.path() / (".c.safetensors.pao-tmp." + alive + ".7"));

  { std::ofstream(dir.path() / "manifest.json") << "{ not json"; }
  CHECK_THROWS_WITH_AS(run_golden({cases[0]}, o), doctest::Contains("--force"), Error);
  o.force = true;
  r = run_golden({cases[0]}, o);
  CHECK(r.manifest_restarted);
  CHECK(r.written == 1);
  CHECK(read_manifest(r.manifest_path).find(cases[0].id) != nullptr);
}

// CPU-only checks of the CUDA harness and benchmark (cuda/check, cuda/bench): the suites that
// pao-cuda-check runs (data/cases smoke, edges and instances) are cases the oracle and the launchers
// accept, and instances covers every decode and prefix instantiation; the benchmark's CSV is what
// `pao sim calibrate` reads. (The harness judges through lib/diff: tests/diff covers the rules.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "bench/bench_kernels.hpp"
#include "bench/measurement_csv.hpp"
#include "check/case_params.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/prefix_launch.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/sim/studies/calibrate.hpp"

using namespace pao;
using namespace pao::cuda;
using namespace pao::cuda::check;

namespace {

std::vector<cases::Case> suite(const std::string& name, bool full = false) {
  return cases::expand_suite(data_dir() / "cases" / (name + ".json"), full);
}

/// The launch checks of a decode case on its host tensors, with a fake output address (the checks
/// never dereference it).
Status launch_status(const cases::DecodeCase& c, KernelVariant kernel) {
  static float storage[64];
  DecodeParams p = case_decode_params(c, c.args().options);
  p.out = p.tmp_out = storage;
  p.max_logits = p.exp_sums = storage;
  DecodePlan plan;
  if (Status st = plan_decode_launch(kernel, p, c.spec.max_seq_len, c.spec.partition_size,
                                     case_seq_lens(c.seq_lens), plan);
      !st.ok())
    return st;
  DecodeLaunch launch;
  return make_decode_launch(p, plan, launch);
}

/// The launch checks of a prefix case.
Status launch_status(const cases::PrefixCase& c) {
  static float storage[64];
  const cases::Case& s = c.spec;
  PrefixParams p = case_prefix_params(c, c.args().options);
  p.out = storage;
  PrefixPlan plan;
  if (Status st = plan_prefix_launch(p, s.seq_lens, s.query_lens, s.block_m, s.block_n, s.context_tile,
                                     s.max_query_len, plan);
      !st.ok())
    return st;
  PrefixLaunch launch;
  return make_prefix_launch(p, plan, launch);
}

}  // namespace

namespace {

/// Whether every element of `t` is finite: the poison of unused cache slots was never read.
bool all_finite(const Tensor& t) {
  for (double v : t.to_f64())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("pao-cuda-check's smoke and edges suites run on the oracle and pass the launch checks") {
  for (const char* name : {"smoke", "edges"}) {
    const auto cases = suite(name);
    int decode = 0, prefix = 0;
    for (const auto& c : cases) {
      INFO(name, ": ", cases::case_to_json(c));
      if (c.kernel == cases::CaseKernel::prefix) {
        ++prefix;
        const cases::PrefixCase pc = cases::make_prefix_case(c);
        const Status s = launch_status(pc);
        CHECK_MESSAGE(s.ok(), s.message());
        CHECK(all_finite(prefix_attention(pc.args(), Precision::kernel, pc.spec).out));
        continue;
      }
      ++decode;
      const cases::DecodeCase dc = cases::make_decode_case(c);
      for (KernelVariant k : {KernelVariant::v1, KernelVariant::v2}) {
        const Status s = launch_status(dc, k);
        CHECK_MESSAGE(s.ok(), s.message());
      }
      const DecodeOutputs o = paged_attention_v2(dc.args(), Precision::kernel, c);
      CHECK(all_finite(o.out));
      CHECK(all_finite(o.tmp_out));
      CHECK(all_finite(o.exp_sums));
    }
    CHECK(decode >= 8);
    CHECK(prefix >= 3);
  }
}

TEST_CASE("the instances suite, in full, instantiates every compiled kernel") {
  const auto cases = suite("instances", true);
  std::set<std::tuple<int, int, int, int>> decode;
  std::set<std::tuple<int, int, int>> prefix;
  for (const auto& c : cases) {
    INFO(c.id);
    const int dtype = static_cast<int>(c.dtype), cache = static_cast<int>(c.cache_storage_dtype());
    if (c.kernel == cases::CaseKernel::prefix)
      CHECK(prefix.insert({c.head_size, dtype, cache}).second);
    else
      CHECK(decode.insert({c.head_size, c.block_size, dtype, cache}).second);
  }
  // What the dispatcher instantiates (dispatch.hpp): every head size, block size and activation
  // dtype, with the cache in the activation dtype, either fp8, u8 or i8.
  for (std::int32_t hs : kHeadSizes)
    for (DType dt : kActivationDTypes)
      for (DType cache : {dt, DType::fp8_e4m3, DType::fp8_e5m2, DType::u8, DType::i8}) {
        CHECK_MESSAGE(prefix.count({hs, static_cast<int>(dt), static_cast<int>(cache)}) == 1, "prefix hs ",
                      hs, " ", dtype_name(dt), " / ", dtype_name(cache));
        for (std::int32_t bs : kBlockSizes)
          CHECK_MESSAGE(decode.count({hs, bs, static_cast<int>(dt), static_cast<int>(cache)}) == 1,
                        "decode hs ", hs, " bs ", bs, " ", dtype_name(dt), " / ", dtype_name(cache));
      }
  const std::size_t dtypes = std::size(kActivationDTypes) * 5;  // x (same, e4m3, e5m2, u8, i8)
  CHECK(decode.size() == std::size(kHeadSizes) * std::size(kBlockSizes) * dtypes);
  CHECK(prefix.size() == std::size(kHeadSizes) * dtypes);
  // The launchers accept a sample of them (the emulated test runs them all, labelled slow).
  for (std::size_t i = 0; i < cases.size(); i += 17) {
    INFO(cases[i].id);
    if (cases[i].kernel == cases::CaseKernel::prefix) {
      const Status s = launch_status(cases::make_prefix_case(cases[i]));
      CHECK_MESSAGE(s.ok(), s.message());
    } else {
      for (KernelVariant k : {KernelVariant::v1, KernelVariant::v2}) {
        const Status s = launch_status(cases::make_decode_case(cases[i]), k);
        CHECK_MESSAGE(s.ok(), s.message());
      }
    }
  }
}

TEST_CASE("the benchmark's CSV is the measurement CSV of pao sim calibrate") {
  bench::MeasurementRow v1;
  v1.device = "NVIDIA H200, 141 GB";
  v1.num_seqs = 8, v1.num_heads = 32, v1.num_kv_heads = 8, v1.head_size = 128;
  v1.seq_len = 4096;
  v1.time_us = 123.5;
  v1.repeats = 20;
  v1.achieved_gbps = 3000;
  v1.note = "llama";
  bench::MeasurementRow v2 = v1;
  v2.partition_size = 1024;
  v2.time_us = 99.25;
  bench::MeasurementRow fp8 = v2;
  fp8.kv_cache_dtype = DType::fp8_e4m3;
  bench::MeasurementRow prefix = v1;
  prefix.prefix = true;
  prefix.query_len = 512;
  prefix.block_m = 128, prefix.block_n = 64;
  bench::MeasurementRow loop = v2;  // vLLM's benchmark manner over a pool of 1000 blocks
  loop.timing = "loop";
  loop.pool_blocks = 1000;
  loop.max_seq_len = 8192;
  loop.note = "vLLM's manner, \"loop\"\nover a pool";  // quoted as RFC 4180 says, read back as one cell
  const std::string csv = "# comment\n" + bench::measurement_csv_header() + "\n" +
                          bench::measurement_csv_row(v1) + "\n" + bench::measurement_csv_row(v2) + "\n" +
                          bench::measurement_csv_row(fp8) + "\n" + bench::measurement_csv_row(prefix) + "\n" +
                          bench::measurement_csv_row(loop) + "\n";
  const auto rows = sim::parse_measurements(csv, "bench.csv");
  REQUIRE(rows.size() == 5u);
  CHECK(rows[4].timing == sim::Timing::loop);
  CHECK(rows[4].pool_blocks == 1000);
  CHECK(rows[4].workload.max_seq_len == 8192);
  CHECK(rows[1].pool_blocks == 1024);  // gpu timing: the column left empty, the parser's default
  CHECK(rows[0].kernel.kind == KernelVariant::v1);
  CHECK(rows[0].time_us == 123.5);
  CHECK(rows[0].workload.num_seqs == 8);
  CHECK(rows[0].workload.num_kv_heads == 8);
  CHECK(rows[0].workload.seq_lens == std::vector<std::int32_t>(8, 4096));
  CHECK(rows[0].workload.kv_cache_dtype == DType::f16);
  CHECK(rows[0].timing == sim::Timing::gpu);
  CHECK(rows[1].kernel.kind == KernelVariant::v2);
  CHECK(rows[1].kernel.partition_size == 1024);
  CHECK(rows[0].group == rows[1].group);  // the same workload: a V1-vs-V2 decision
  CHECK(rows[2].workload.kv_cache_dtype == DType::fp8_e4m3);
  CHECK(rows[2].group != rows[1].group);
  CHECK(rows[3].kernel.kind == KernelVariant::prefix);
  CHECK(rows[3].kernel.block_m == 128);
  CHECK(rows[3].kernel.block_n == 64);
  CHECK(rows[3].workload.query_lens == std::vector<std::int32_t>(8, 512));
  CHECK(rows[0].workload.query_lens.empty());  // decode: one new token per sequence
}

TEST_CASE("the benchmark's --kernels apply to the cases whose kind runs them") {
  const std::vector<BenchKernel> all = parse_bench_kernels("v1,v2:256,v2,prefix");
  REQUIRE(all.size() == 4);
  CHECK(all[0].variant == KernelVariant::v1);
  CHECK(all[1].variant == KernelVariant::v2);
  CHECK(all[1].partition_size == 256);
  CHECK(all[2].partition_size == 0);
  CHECK(all[3].variant == KernelVariant::prefix);
  CHECK_THROWS_WITH_AS(parse_bench_kernels("v2:0"), doctest::Contains("positive integer"), Error);
  CHECK_THROWS_WITH_AS(parse_bench_kernels("v3"), doctest::Contains("unknown kernel 'v3'"), Error);

  const auto labels = [&](const cases::Case& c) {
    std::string s;
    for (const auto& k : kernels_of_case(all, c)) s += (s.empty() ? "" : ",") + k.label;
    return s;
  };
  const cases::Case decode = cases::parse_case(
      R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "f16", "seq_lens": [1024, 1024],
          "partition_size": 512})",
      "decode");
  const cases::Case prefix = cases::parse_case(
      R"({"kernel": "prefix", "num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "f16", "seq_lens": [600],
          "query_lens": [88]})",
      "prefix");
  const cases::Case cache = cases::parse_case(
      R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [40],
          "query_lens": [8]})",
      "cache");
  CHECK(labels(decode) == "v1,v2:256,v2");
  CHECK(labels(prefix) == "prefix");
  CHECK(labels(cache).empty());
  CHECK_THROWS_WITH_AS(require_bench_case(cache), doctest::Contains("no CUDA kernel"), Error);
  require_bench_case(decode);
  // V2 at its own partition size; v2 alone keeps the case's.
  CHECK(case_for_kernel(decode, all[1]).partition_size == 256);
  CHECK(case_for_kernel(decode, all[1]).id == decode.id);
  CHECK(case_for_kernel(decode, all[2]).partition_size == 512);
  // Bytes: the caches dominate; V2's partials and prefix's new tokens add to them.
  const double kv_bytes = 2.0 * 2048 * 2 * 128 * 2;  // K and V of every token, f16
  const double query_out = 2.0 * 16 * 128 * 2;       // 2 seqs x 8 heads, read once and written once
  DecodePlan plan;
  plan.kernel = KernelVariant::v1;
  CHECK(decode_bytes_moved(decode, plan) == doctest::Approx(kv_bytes + query_out));
  plan.kernel = KernelVariant::v2;
  plan.max_num_partitions = 2;  // tmp_out (f16) and max_logits, exp_sums (f32), written and read
  CHECK(decode_bytes_moved(decode, plan) ==
        doctest::Approx(kv_bytes + query_out + 2.0 * 16 * 2 * (128 * 2 + 8)));
  CHECK(bench_case_gib(decode) * 1024 * 1024 * 1024 > kv_bytes);
}

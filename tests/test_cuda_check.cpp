// CPU-only checks of the CUDA harness and benchmark (cuda/check, cuda/bench): the built-in suites
// are cases the oracle and the launchers accept and cover every decode and prefix instantiation, case files
// are read strictly, the tensor reports count and locate mismatches, and the benchmark's CSV is
// what `pao sim calibrate` reads.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "bench/measurement_csv.hpp"
#include "check/check_cases.hpp"
#include "check/tensor_report.hpp"
#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/prefix_launch.hpp"
#include "pao/error.hpp"
#include "pao/paged_attention.hpp"
#include "pao/prefix_attention.hpp"
#include "pao/sim/calibrate.hpp"

using namespace pao;
using namespace pao::cuda;
using namespace pao::cuda::check;

namespace {

/// The launch checks of a decode case, with fake device addresses (never dereferenced on the host).
Status launch_status(const CheckCase& c, DecodeKernel kernel) {
  static float storage[64];
  const DecodeCaseSpec& s = c.spec;
  DecodeParams p;
  p.dtype = s.dtype;
  p.kv_cache_dtype = s.kv_cache_dtype;
  p.num_seqs = s.num_seqs, p.num_heads = s.num_heads, p.num_kv_heads = s.num_kv_heads;
  p.head_size = s.head_size, p.block_size = s.block_size;
  p.query = p.key_cache = p.value_cache = p.out = p.tmp_out = storage;
  p.block_tables = p.seq_lens = reinterpret_cast<const std::int32_t*>(storage);
  p.max_logits = p.exp_sums = storage;
  DecodePlan plan;
  if (Status st = plan_decode_launch(kernel, p, s.max_seq_len, s.partition_size, s.seq_lens, plan); !st.ok())
    return st;
  DecodeLaunch launch;
  return make_decode_launch(p, plan, launch);
}

/// The launch checks of a prefix case.
Status prefix_launch_status(const CheckCase& c) {
  static float storage[64];
  const PrefixCaseSpec& s = c.prefix;
  PrefixParams p;
  p.dtype = s.dtype;
  p.kv_cache_dtype = s.kv_cache_dtype;
  p.num_seqs = s.num_seqs(), p.num_tokens = s.num_tokens();
  p.num_heads = s.num_heads, p.num_kv_heads = s.num_kv_heads;
  p.head_size = s.head_size, p.block_size = s.block_size;
  p.query = p.key = p.value = p.key_cache = p.value_cache = p.out = storage;
  p.block_tables = reinterpret_cast<const std::int32_t*>(storage);
  std::vector<std::int32_t> seq_lens;
  for (std::size_t i = 0; i < s.query_lens.size(); ++i)
    seq_lens.push_back(s.context_lens[i] + s.query_lens[i]);
  PrefixPlan plan;
  if (Status st = plan_prefix_launch(p, seq_lens, s.query_lens, s.block_m, s.block_n, s.context_tile,
                                     s.max_query_len, plan);
      !st.ok())
    return st;
  PrefixLaunch launch;
  return make_prefix_launch(p, plan, launch);
}

}  // namespace

TEST_CASE("the smoke suite runs on the oracle and passes the launch checks") {
  const auto cases = suite_cases("smoke");
  CHECK(cases.size() >= 12);
  std::set<std::string> ids;
  int prefix = 0;
  for (const auto& c : cases) {
    INFO(describe(c));
    CHECK(ids.insert(c.id).second);
    if (c.kernel == CheckKernel::prefix) {
      ++prefix;
      const Status s = prefix_launch_status(c);
      CHECK_MESSAGE(s.ok(), s.message());
      const PrefixCase pc = make_prefix_case(c.prefix);
      PrefixArgs args = pc.args();
      args.options.k_head_scales = c.k_head_scales;
      args.options.v_head_scales = c.v_head_scales;
      CHECK_NOTHROW(prefix_attention(args, Precision::kernel));
      continue;
    }
    for (DecodeKernel k : {DecodeKernel::v1, DecodeKernel::v2}) {
      const Status s = launch_status(c, k);
      CHECK_MESSAGE(s.ok(), s.message());
    }
    const DecodeCase dc = make_decode_case(c.spec);
    DecodeArgs args = dc.args();
    args.options.k_head_scales = c.k_head_scales;
    args.options.v_head_scales = c.v_head_scales;
    CHECK_NOTHROW(paged_attention_v2(args, Precision::kernel));
  }
  CHECK(prefix >= 3);
}

TEST_CASE("the vllm suite instantiates every compiled kernel exactly once") {
  const auto cases = suite_cases("vllm");
  std::set<std::tuple<int, int, int, int>> decode;
  std::set<std::tuple<int, int, int>> prefix;
  std::set<std::string> ids;
  for (const auto& c : cases) {
    INFO(describe(c));
    CHECK(ids.insert(c.id).second);
    if (c.kernel == CheckKernel::prefix) {
      const PrefixCaseSpec& s = c.prefix;
      prefix.insert({s.head_size, static_cast<int>(s.dtype), static_cast<int>(s.kv_cache_dtype)});
      if (s.kv_layout == KVLayout::vllm)
        CHECK(s.head_size % (16 / static_cast<std::int32_t>(dtype_size(s.kv_cache_dtype))) == 0);
      const Status st = prefix_launch_status(c);
      CHECK_MESSAGE(st.ok(), st.message());
      continue;
    }
    const DecodeCaseSpec& s = c.spec;
    decode.insert({s.head_size, s.block_size, static_cast<int>(s.dtype), static_cast<int>(s.kv_cache_dtype)});
    CHECK(s.num_seqs == 7);
    CHECK(s.seq_lens.size() == 7u);
    // vLLM's key cache needs head_size % x == 0 (x = 16 for fp8): otherwise the case is NHD.
    if (s.kv_layout == KVLayout::vllm)
      CHECK(s.head_size % (16 / static_cast<std::int32_t>(dtype_size(s.kv_cache_dtype))) == 0);
    for (DecodeKernel k : {DecodeKernel::v1, DecodeKernel::v2}) {
      const Status st = launch_status(c, k);
      CHECK_MESSAGE(st.ok(), st.message());
    }
  }
  const std::size_t dtypes = std::size(kActivationDTypes) * 3;  // x (same, e4m3, e5m2)
  CHECK(decode.size() == std::size(kHeadSizes) * std::size(kBlockSizes) * dtypes);
  CHECK(prefix.size() == std::size(kHeadSizes) * dtypes);
  CHECK(cases.size() == decode.size() + prefix.size());
  CHECK_THROWS_WITH_AS(suite_cases("nightly"), "--suite: unknown suite 'nightly' (built in: smoke, vllm)",
                       Error);
}

TEST_CASE("case files are read strictly") {
  const CheckCase c = parse_case_json(
      R"({"kernel": "decode", "num_heads": 8, "num_kv_heads": 2, "head_size": 96, "block_size": 8,
          "dtype": "bf16", "kv_cache_dtype": "fp8_e5m2", "k_scale": 0.5, "alibi": true, "seed": 7,
          "num_seqs": 5, "max_seq_len": 300, "partition_size": 64, "kv_layout": "nhd"})",
      "case.json");
  CHECK(c.spec.num_heads == 8);
  CHECK(c.spec.kv_cache_dtype == DType::fp8_e5m2);
  CHECK(c.spec.kv_layout == KVLayout::nhd);
  CHECK(c.spec.alibi);
  REQUIRE(c.spec.seq_lens.size() == 5u);
  CHECK(c.spec.seq_lens.back() == 300);  // vLLM's test: the last length is the maximum
  for (auto l : c.spec.seq_lens) CHECK((l >= 1 && l <= 300));
  CHECK(parse_case_json(R"({"max_seq_len": 300, "num_seqs": 5, "seed": 7})", "a").spec.seq_lens ==
        parse_case_json(R"({"max_seq_len": 300, "num_seqs": 5, "seed": 7})", "b").spec.seq_lens);

  CHECK_THROWS_WITH_AS(parse_case_json(R"({"seq_lens": [1], "head_sise": 64})", "c.json"),
                       "c.json: unknown field 'head_sise'", Error);
  const CheckCase p = parse_case_json(
      R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 1, "head_size": 64, "block_size": 10,
          "seq_lens": [300, 20], "query_lens": [100, 20], "block_m": 64, "block_n": 32, "sliding_window": 50})",
      "prefix.json");
  CHECK(p.kernel == CheckKernel::prefix);
  CHECK(p.prefix.context_lens == std::vector<std::int32_t>{200, 0});
  CHECK(p.prefix.query_lens == std::vector<std::int32_t>{100, 20});
  CHECK(p.prefix.block_m == 64);
  CHECK(p.prefix.context_tile == 32);
  CHECK(p.prefix.sliding_window == 50);
  CHECK_THROWS_WITH_AS(
      parse_case_json(R"({"kernel": "prefix", "seq_lens": [1], "query_lens": [2]})", "c.json"),
      "c.json: seq_lens[0] = 1 must be >= query_lens[0] = 2 >= 0 (seq_len = context + new tokens)", Error);
  CHECK_THROWS_WITH_AS(
      parse_case_json(R"({"kernel": "prefix", "seq_lens": [4], "query_lens": [2], "partition_size": 64})",
                      "c.json"),
      "c.json: partition_size is a decode field (prefix: seq_lens and query_lens)", Error);
  CHECK_THROWS_WITH_AS(parse_case_json(R"({"seq_lens": [4], "query_lens": [2]})", "c.json"),
                       "c.json: query_lens is a prefix field", Error);
  CHECK_THROWS_WITH_AS(parse_case_json(R"({"kernel": "fused", "seq_lens": [1]})", "c.json"),
                       "c.json: kernel 'fused': expected decode or prefix", Error);
  CHECK_THROWS_WITH_AS(parse_case_json(R"({"num_seqs": 2, "seq_lens": [1]})", "c.json"),
                       "c.json: num_seqs = 2 but seq_lens has 1 entries", Error);
  CHECK_THROWS_AS(parse_case_json("{", "c.json"), Error);
  CHECK_THROWS_AS(parse_case_json(R"({"dtype": "f8"})", "c.json"), Error);
}

TEST_CASE("tensor reports count every mismatch and locate the worst") {
  Tensor expected(DType::f32, {2, 3});
  Tensor actual(DType::f32, {2, 3});
  for (std::int64_t i = 0; i < 6; ++i) {
    expected.set({i / 3, i % 3}, static_cast<double>(i));
    actual.set({i / 3, i % 3}, static_cast<double>(i));
  }
  CHECK(compare_bitwise("c", "v1.out", expected, actual).passed);

  actual.set({0, 1}, 1.5);
  actual.set({1, 2}, 7.0);
  const TensorReport r = compare_bitwise("c", "v1.out", expected, actual);
  CHECK(!r.passed);
  CHECK(r.mismatches == 2);
  CHECK(r.worst_index == 5);
  CHECK(r.max_abs_error == 2.0);
  CHECK(format(r, expected.shape()) ==
        "FAIL c v1.out [2, 3] vs kernel: 2 of 6 elements differ; max |gpu - oracle| 2 at [1, 2] (flat 5): "
        "gpu 7, "
        "oracle 5");

  // Any NaN equals any NaN (hardware conversions make canonical NaNs); -0 is not +0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a(DType::f16, {2}), b(DType::f16, {2});
  a.set({0}, nan);
  b.set({0}, -nan);
  a.set({1}, 0.0);
  b.set({1}, -0.0);
  const TensorReport z = compare_bitwise("c", "v2.out", a, b);
  CHECK(z.mismatches == 1);
  CHECK(z.worst_index == 1);
  CHECK(z.max_abs_error == 0.0);

  const TensorReport shape = compare_bitwise("c", "v2.out", a, expected);
  CHECK(!shape.passed);
  CHECK(!shape.note.empty());
}

TEST_CASE("the exact-precision check uses the derived bound") {
  Tensor exact(DType::f64, {4}), kernel(DType::f16, {4}), gpu(DType::f16, {4});
  for (std::int64_t i = 0; i < 4; ++i) {
    exact.set({i}, 0.25 * static_cast<double>(i) + 1e-4);
    kernel.set({i}, 0.25 * static_cast<double>(i));
    gpu.set({i}, 0.25 * static_cast<double>(i));
  }
  TensorReport r = compare_to_exact("c", "v1.out", exact, kernel, gpu);
  CHECK(r.passed);
  CHECK(r.bound == doctest::Approx(2e-4 + (4 * 0x1p-11 + 1e-6) * (0.75 + 1e-4)));
  gpu.set({2}, 0.5 + 0.25);
  r = compare_to_exact("c", "v1.out", exact, kernel, gpu);
  CHECK(!r.passed);
  CHECK(r.mismatches == 1);
  CHECK(r.worst_index == 2);
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
  const std::string csv = "# comment\n" + bench::measurement_csv_header() + "\n" +
                          bench::measurement_csv_row(v1) + "\n" + bench::measurement_csv_row(v2) + "\n" +
                          bench::measurement_csv_row(fp8) + "\n" + bench::measurement_csv_row(prefix) + "\n";
  const auto rows = sim::parse_measurements(csv, "bench.csv");
  REQUIRE(rows.size() == 4u);
  CHECK(rows[0].kernel.kind == sim::KernelKind::v1);
  CHECK(rows[0].time_us == 123.5);
  CHECK(rows[0].workload.num_seqs == 8);
  CHECK(rows[0].workload.num_kv_heads == 8);
  CHECK(rows[0].workload.seq_lens == std::vector<std::int32_t>(8, 4096));
  CHECK(rows[0].workload.kv_cache_dtype == DType::f16);
  CHECK(!rows[0].host_timing);
  CHECK(rows[1].kernel.kind == sim::KernelKind::v2);
  CHECK(rows[1].kernel.partition_size == 1024);
  CHECK(rows[0].group == rows[1].group);  // the same workload: a V1-vs-V2 decision
  CHECK(rows[2].workload.kv_cache_dtype == DType::fp8_e4m3);
  CHECK(rows[2].group != rows[1].group);
  CHECK(rows[3].kernel.kind == sim::KernelKind::prefix);
  CHECK(rows[3].kernel.block_m == 128);
  CHECK(rows[3].kernel.block_n == 64);
  CHECK(rows[3].workload.query_lens == std::vector<std::int32_t>(8, 512));
  CHECK(rows[0].workload.query_lens.empty());  // decode: one new token per sequence
}

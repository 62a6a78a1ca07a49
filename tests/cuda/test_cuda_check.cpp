// CPU-only checks of the CUDA harness and benchmark (cuda/check, cuda/bench): the suites that
// pao-cuda-check runs (data/cases smoke, edges and instances) are cases the oracle and the launchers
// accept, and instances covers every decode and prefix instantiation; the tensor reports count and
// locate mismatches; the benchmark's CSV is what `pao sim calibrate` reads.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "bench/measurement_csv.hpp"
#include "check/case_params.hpp"
#include "check/tensor_report.hpp"
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
Status launch_status(const cases::DecodeCase& c, DecodeKernel kernel) {
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
        CHECK(all_finite(prefix_attention(pc.args(), Precision::kernel).out));
        continue;
      }
      ++decode;
      const cases::DecodeCase dc = cases::make_decode_case(c);
      for (DecodeKernel k : {DecodeKernel::v1, DecodeKernel::v2}) {
        const Status s = launch_status(dc, k);
        CHECK_MESSAGE(s.ok(), s.message());
      }
      const DecodeOutputs o = paged_attention_v2(dc.args(), Precision::kernel, cases::kernel_config(c));
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
  // dtype, with the cache in the activation dtype or either fp8.
  for (std::int32_t hs : kHeadSizes)
    for (DType dt : kActivationDTypes)
      for (DType cache : {dt, DType::fp8_e4m3, DType::fp8_e5m2}) {
        CHECK_MESSAGE(prefix.count({hs, static_cast<int>(dt), static_cast<int>(cache)}) == 1, "prefix hs ",
                      hs, " ", dtype_name(dt), " / ", dtype_name(cache));
        for (std::int32_t bs : kBlockSizes)
          CHECK_MESSAGE(decode.count({hs, bs, static_cast<int>(dt), static_cast<int>(cache)}) == 1,
                        "decode hs ", hs, " bs ", bs, " ", dtype_name(dt), " / ", dtype_name(cache));
      }
  const std::size_t dtypes = std::size(kActivationDTypes) * 3;  // x (same, e4m3, e5m2)
  CHECK(decode.size() == std::size(kHeadSizes) * std::size(kBlockSizes) * dtypes);
  CHECK(prefix.size() == std::size(kHeadSizes) * dtypes);
  // The launchers accept a sample of them (the emulated test runs them all, labelled slow).
  for (std::size_t i = 0; i < cases.size(); i += 17) {
    INFO(cases[i].id);
    if (cases[i].kernel == cases::CaseKernel::prefix) {
      const Status s = launch_status(cases::make_prefix_case(cases[i]));
      CHECK_MESSAGE(s.ok(), s.message());
    } else {
      for (DecodeKernel k : {DecodeKernel::v1, DecodeKernel::v2}) {
        const Status s = launch_status(cases::make_decode_case(cases[i]), k);
        CHECK_MESSAGE(s.ok(), s.message());
      }
    }
  }
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
  CHECK(rows[0].timing == sim::Timing::gpu);
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

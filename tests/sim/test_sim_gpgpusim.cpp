// The simulator against GPGPU-Sim's runs of pao's own CUDA kernels (data/measurements/gpgpusim-*,
// docs/gpgpusim.md), both generations: pao-cuda (since issue #38's cuts) and pao-cuda-pre38. Each
// instruction model reproduces the warp instructions GPGPU-Sim counted in the microbenchmarks it
// was derived from and predicts those of launches it was not fitted to; the in-order rates are the
// microbenchmarks' (recomputed here from the CSVs, not copied); the uncalibrated model meets issue
// 24's targets on the timing grids (right V1-or-V2 winner in >= 90 % of the decisive groups, MAPE
// <= 20 %) without worsening the published A100 rows (MAPE 26.1 %, 4 of 6 winners when the
// pao-cuda model landed); and what has no pao-cuda model says so.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/instruction_model.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/studies/validate.hpp"

using namespace pao::sim;

namespace {

std::string measurements(const char* name) { return (pao::data_dir() / "measurements" / name).string(); }

/// The CSV's lines, by line number (1-based, as Measurement::line counts them).
std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines(1);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// "a + b + c" -> {a, b, c}.
std::vector<double> sum_terms(const std::string& list) {
  std::vector<double> out;
  for (std::size_t pos = 0; pos < list.size();) {
    const auto plus = list.find('+', pos);
    out.push_back(std::stod(list.substr(pos, plus - pos)));
    pos = plus == std::string::npos ? list.size() : plus + 1;
  }
  return out;
}

// GPGPU-Sim's per-kernel counts of a row, from its note. (Parsed by hand: GCC 12 with sanitizers
// warns inside std::regex.)

/// "...; cycles a + b; ..." or "...; cycles N; ...".
std::vector<double> kernel_cycles(const std::string& line) {
  const std::string label = "; cycles ";
  const auto start = line.find(label);
  REQUIRE(start != std::string::npos);
  const auto from = start + label.size();
  const auto end = line.find(';', from);
  REQUIRE(end != std::string::npos);
  return sum_terms(line.substr(from, end - from));
}

/// "N warp instructions (a + b)" or "N warp instructions".
std::vector<double> kernel_warp_instructions(const std::string& line) {
  const std::string label = " warp instructions";
  const auto at = line.find(label);
  REQUIRE(at != std::string::npos);
  const auto after = at + label.size();
  if (line.compare(after, 2, " (") == 0) {
    const auto close = line.find(')', after);
    REQUIRE(close != std::string::npos);
    return sum_terms(line.substr(after + 2, close - after - 2));
  }
  const auto space = line.rfind(' ', at - 1);
  REQUIRE(space != std::string::npos);
  return {std::stod(line.substr(space + 1, at - space - 1))};
}

struct CountCheck {
  double max_attention_error = 0;  // over the attention kernels: |model / GPGPU-Sim - 1|
  double max_reduce_error = 0;     // over the V2 reduce kernels
  std::size_t kernels = 0;
};

/// The model's warp instructions per kernel against GPGPU-Sim's, over a CSV's rows (each of
/// `implementation`).
CountCheck check_counts(const char* csv, KernelImplementation implementation) {
  const Device d = load_device("gpgpusim-v100");
  const std::string path = measurements(csv);
  const auto lines = lines_of(path);
  CountCheck c;
  for (const auto& m : load_measurements(path)) {
    CAPTURE(lines[m.line]);
    REQUIRE(m.kernel.implementation == implementation);
    const auto simulated = kernel_warp_instructions(lines[m.line]);
    const auto launches = build_launches(d, m.workload, m.kernel);
    REQUIRE(launches.size() == simulated.size());
    for (std::size_t k = 0; k < launches.size(); ++k) {
      const double error = launches[k].total_warp_instructions() / simulated[k] - 1;
      CAPTURE(k);
      CAPTURE(error);
      double& of_kernel = k == 0 ? c.max_attention_error : c.max_reduce_error;
      of_kernel = std::max(of_kernel, std::fabs(error));
      ++c.kernels;
    }
  }
  return c;
}

/// The cycles per warp instruction of a microbenchmark CSV's launches of one compiled instance (by
/// default the reference one: f16, blocks of 16): each kernel's cycles less the launch latency and
/// less its CTA's dependent load round trips (the model's iterations at iteration_latency_us: they
/// add to the in-order instructions) over its busiest warp's instructions (4 warps per CTA, equal
/// shares), least squares through the origin.
double in_order_rate(const Device& d, const char* csv, pao::DType dtype = pao::DType::f16,
                     pao::DType cache = pao::DType::f16, std::int32_t block_size = 16) {
  const std::string path = measurements(csv);
  const auto lines = lines_of(path);
  const double launch_cycles = d.launch_latency_us * d.clock_ghz * 1e3;
  double xy = 0, xx = 0;
  for (const auto& m : load_measurements(path)) {
    if (m.workload.dtype != dtype || m.workload.kv_cache_dtype != cache ||
        m.workload.block_size != block_size)
      continue;
    const auto cycles = kernel_cycles(lines[m.line]);
    const auto warps = kernel_warp_instructions(lines[m.line]);
    const auto launches = build_launches(d, m.workload, m.kernel);
    REQUIRE(cycles.size() == warps.size());
    for (std::size_t k = 0; k < cycles.size(); ++k) {
      const double x = warps[k] / static_cast<double>(launches[k].ctas.size()) / 4.0;
      const double loads = launches[k].ctas.front().iterations * d.iteration_latency_us * d.clock_ghz * 1e3;
      xy += x * (cycles[k] - launch_cycles - loads);
      xx += x * x;
    }
  }
  REQUIRE(xx > 0);
  return xy / xx;
}

}  // namespace

TEST_CASE("sim gpgpusim: the pao-cuda instruction models against GPGPU-Sim's warp instructions") {
  using enum KernelImplementation;
  struct Expected {
    const char* csv;
    KernelImplementation implementation;
    std::size_t min_kernels;
    double attention_error, reduce_error;  // the most each kernel's count may be off
  };
  for (const auto& e : {
           // The microbenchmarks the factors come from: within 3 % (a two-part fit of four lengths
           // and a one-factor fit of the reduce's two merges).
           Expected{"gpgpusim-v100-microbench-cuts.csv", pao_cuda, 100, 0.03, 0.03},
           Expected{"gpgpusim-v100-microbench.csv", pao_cuda_pre38, 100, 0.03, 0.03},
           // vLLM's own kernels: the model's count times the device's instruction_expansion_*,
           // measured on these launches.
           Expected{"gpgpusim-v100-microbench-vllm.csv", vllm, 16, 0.03, 0.03},
           // pao's kernels on the 16-SM timing grid (8 / 2 heads, batches of 1 to 4; not fitted):
           // the attention kernels within 1 %, the reduce within 6 % (it merges up to 8 partitions
           // there, the microbenchmarks' 2 and 4).
           Expected{"gpgpusim-v100-16sm-pao-cuts.csv", pao_cuda, 40, 0.01, 0.06},
           // vLLM's on the same grid (not fitted to it): the attention kernels within 3 %, the
           // reduce within 4 % (its expansion was measured on merges of 2 and 4 partitions).
           Expected{"gpgpusim-v100-16sm-vllm.csv", vllm, 40, 0.03, 0.04},
           // Before the cuts, the held-out shapes (head 64, blocks of 32, bf16, an fp8 cache, MHA,
           // MQA, sequences ending mid-block): within 15 %.
           Expected{"gpgpusim-v100-shapes.csv", pao_cuda_pre38, 20, 0.15, 0.15},
       }) {
    CAPTURE(std::string_view(e.csv));
    const CountCheck c = check_counts(e.csv, e.implementation);
    CHECK(c.kernels >= e.min_kernels);
    CHECK(c.max_attention_error < e.attention_error);
    CHECK(c.max_reduce_error < e.reduce_error);
  }
}

TEST_CASE("sim gpgpusim: the in-order rates are the microbenchmarks'") {
  // Recomputed from the CSVs (in_order_rate), over the f16 launches with blocks of 16 (the other
  // instances' rates relative to it are the in_order factors, which the timing checks cover).
  // pao's kernels since issue #38, which like vLLM's issue a token's loads before its products: the
  // device's field, on both SM counts. Before the cuts: their own rate, on every device.
  const Device d = load_device("gpgpusim-v100");
  CHECK(d.cycles_per_warp_instruction ==
        doctest::Approx(in_order_rate(d, "gpgpusim-v100-microbench-cuts.csv")).epsilon(0.005));
  CHECK(load_device("gpgpusim-v100-16sm").cycles_per_warp_instruction == d.cycles_per_warp_instruction);
  CHECK(kPaoCudaPre38CyclesPerWarpInstruction ==
        doctest::Approx(in_order_rate(d, "gpgpusim-v100-microbench.csv")).epsilon(0.005));
  // Each instance's in_order factor is its rate over the reference's, from the same CSV.
  using pao::DType;
  struct Instance {
    DType dtype, cache;
    std::int32_t block_size;
  };
  for (const auto& [implementation, csv] :
       {std::pair{KernelImplementation::pao_cuda, "gpgpusim-v100-microbench-cuts.csv"},
        std::pair{KernelImplementation::pao_cuda_pre38, "gpgpusim-v100-microbench.csv"}}) {
    const double reference = in_order_rate(d, csv);
    for (const auto& i : {Instance{DType::f16, DType::f16, 32}, Instance{DType::bf16, DType::bf16, 16},
                          Instance{DType::bf16, DType::bf16, 32}, Instance{DType::f16, DType::fp8_e4m3, 16},
                          Instance{DType::f16, DType::fp8_e4m3, 32}}) {
      Workload w;
      w.dtype = i.dtype;
      w.kv_cache_dtype = i.cache;
      w.block_size = i.block_size;
      CAPTURE(std::string_view(csv));
      CAPTURE(w.to_string());
      CHECK(
          instruction_scale(implementation, w).in_order ==
          doctest::Approx(in_order_rate(d, csv, i.dtype, i.cache, i.block_size) / reference).epsilon(0.005));
    }
  }
  // Every microbenchmark launch's time, each instance with its factors: within 8 %.
  ValidationOptions o;
  o.leave_one_group_out = false;
  for (const char* csv : {"gpgpusim-v100-microbench-cuts.csv", "gpgpusim-v100-microbench.csv"}) {
    CAPTURE(std::string_view(csv));
    const std::string path = measurements(csv);
    const ValidationReport r = validate(d, load_measurements(path), o, path);
    CHECK(r.rows.size() >= 70);
    CHECK(r.uncalibrated.max_error <= 0.08);
  }
}

TEST_CASE("sim gpgpusim: the uncalibrated model meets the targets on the grid, the A100 rows no worse") {
  ValidationOptions o;
  o.leave_one_group_out = false;
  struct Grid {
    const char* device;
    const char* csv;
  };
  // pao's kernels before issue #38's cuts on 80 and 16 SMs, after them on 16 SMs, and vLLM's own on
  // 16 SMs (nothing of the timing grids is fitted: the factors, expansions and rates come from the
  // microbenchmarks).
  for (const auto& [device, csv] :
       {Grid{"gpgpusim-v100", "gpgpusim-v100.csv"}, Grid{"gpgpusim-v100-16sm", "gpgpusim-v100-16sm.csv"},
        Grid{"gpgpusim-v100-16sm", "gpgpusim-v100-16sm-pao-cuts.csv"},
        Grid{"gpgpusim-v100-16sm", "gpgpusim-v100-16sm-vllm.csv"}}) {
    CAPTURE(std::string_view(csv));
    const std::string path = measurements(csv);
    const auto rows = load_measurements(path);
    CHECK(rows.size() >= 24);
    const ValidationReport r = validate(load_device(device), rows, o, path);
    CHECK(r.uncalibrated.decisions >= 5);
    CHECK(r.uncalibrated.decision_accuracy >= 0.9);
    CHECK(r.uncalibrated.mape <= 0.20);
  }
  const std::string path = measurements("published-vllm.csv");
  std::vector<Measurement> a100;
  for (const auto& m : load_measurements(path))
    if (m.gpu.find("a100") != std::string::npos) a100.push_back(m);
  const ValidationReport r = validate(load_device("a100-40gb"), a100, o, path);
  CHECK(r.uncalibrated.mape <= 0.261 + 5e-4);
  CHECK(r.uncalibrated.decisions == 6);
  CHECK(r.uncalibrated.decision_accuracy * 6 >= 5 - 1e-9);
}

TEST_CASE("sim gpgpusim: pao-cuda is a decode model; prefix and fallback say they have none") {
  const Device d = load_device("gpgpusim-v100");
  Workload w;
  w.num_heads = 8;
  w.num_kv_heads = 2;
  w.seq_lens = {640};
  w.query_lens = {128};
  KernelConfig k = parse_kernel_spec("prefix", {});
  k.implementation = KernelImplementation::pao_cuda;
  CHECK(k.label() == "prefix-128x64@pao-cuda");
  CHECK_THROWS_WITH_AS(build_launches(d, w, k), doctest::Contains("no model of pao's own CUDA prefix kernel"),
                       pao::Error);
  k = parse_kernel_spec("fallback", {});
  k.implementation = KernelImplementation::pao_cuda;
  CHECK_THROWS_WITH_AS(build_launches(d, w, k), doctest::Contains("not a pao CUDA kernel"), pao::Error);
  // The same decode launch on the simulated V100, against what GPGPU-Sim issued of vLLM's own
  // kernels (the device's instruction_expansion_*): pao's kernels before issue #38 issued 2.3 to 3
  // times as many instructions (the microbenchmarks: 2.79 per token) and took longer; the cut ones,
  // the ratio GPGPU-Sim counted on the 16-SM grid (1 x 1024 tokens, V1) within 3 %.
  Workload decode;
  decode.num_heads = 8;
  decode.num_kv_heads = 2;
  decode.seq_lens = {1024};
  KernelConfig v1 = parse_kernel_spec("v1", {});
  const auto vllm = build_launches(d, decode, v1);
  const auto ratio_to_vllm = [&](KernelImplementation implementation) {
    v1.implementation = implementation;
    return build_launches(d, decode, v1)[0].total_warp_instructions() / vllm[0].total_warp_instructions();
  };
  CHECK(ratio_to_vllm(KernelImplementation::pao_cuda_pre38) > 2.3);
  CHECK(ratio_to_vllm(KernelImplementation::pao_cuda_pre38) < 3.0);
  const auto simulated = [&](const char* csv) {
    const std::string path = measurements(csv);
    const auto lines = lines_of(path);
    for (const auto& m : load_measurements(path))
      if (m.kernel.kind == pao::KernelVariant::v1 && m.workload.num_seqs == 1 &&
          m.workload.seq_lens[0] == 1024)
        return kernel_warp_instructions(lines[m.line]).front();
    FAIL("no V1 launch of 1 x 1024 tokens in ", csv);
    return 0.0;
  };
  CHECK(
      ratio_to_vllm(KernelImplementation::pao_cuda) ==
      doctest::Approx(simulated("gpgpusim-v100-16sm-pao-cuts.csv") / simulated("gpgpusim-v100-16sm-vllm.csv"))
          .epsilon(0.03));
  v1.implementation = KernelImplementation::pao_cuda_pre38;
  CHECK(simulate(d, build_launches(d, decode, v1)).time_us > simulate(d, vllm).time_us);
  v1.implementation = KernelImplementation::pao_cuda;
  CHECK(v1.label() == "v1@pao-cuda");
  CHECK(parse_kernel_spec("v2:256@pao-cuda-pre38", {}).label() == "v2-256@pao-cuda-pre38");
  CHECK(parse_kernel_implementation("pao-cuda", "x") == KernelImplementation::pao_cuda);
  // The label's form parses back: "v2-512@pao-cuda" is written "v2:512@pao-cuda".
  const KernelConfig v2 = parse_kernel_spec("v2:512@pao-cuda", {});
  CHECK(v2.kind == pao::KernelVariant::v2);
  CHECK(v2.partition_size == 512);
  CHECK(v2.implementation == KernelImplementation::pao_cuda);
  CHECK(v2.label() == "v2-512@pao-cuda");
  CHECK(parse_kernel_spec("v1@vllm", v2).implementation == KernelImplementation::vllm);
  CHECK_THROWS_WITH_AS(
      parse_kernel_spec("v1@cutlass", {}),
      "kernel 'v1@cutlass': 'cutlass' is not a kernel implementation (expected one of vllm, pao-cuda, "
      "pao-cuda-pre38)",
      pao::Error);
  CHECK_THROWS_WITH_AS(parse_kernel_implementation("triton", "--implementation"),
                       "--implementation: 'triton' is not a kernel implementation (expected one of vllm, "
                       "pao-cuda, pao-cuda-pre38)",
                       pao::Error);
}

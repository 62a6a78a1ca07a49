// The simulator against GPGPU-Sim's runs of pao's own CUDA kernels (data/measurements/gpgpusim-*,
// docs/gpgpusim.md): the pao-cuda instruction model reproduces the warp instructions GPGPU-Sim
// counted in the microbenchmarks it was derived from and predicts those of the held-out shapes;
// the descriptor's cycles per warp instruction is the microbenchmarks' (recomputed here from the
// CSV, not copied); the uncalibrated model meets issue 24's targets on the timing grid (right
// V1-or-V2 winner in >= 90 % of the decisive groups, MAPE <= 20 %) without worsening the published
// A100 rows (MAPE 26.1 %, 4 of 6 winners when the pao-cuda model landed); and what has no pao-cuda
// model says so.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
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
  double max_error = 0;  // over kernels: |model / GPGPU-Sim - 1|
  std::size_t kernels = 0;
};

/// The pao-cuda model's warp instructions per kernel against GPGPU-Sim's, over a CSV's rows.
CountCheck check_counts(const char* csv) {
  const Device d = load_device("gpgpusim-v100");
  const std::string path = measurements(csv);
  const auto lines = lines_of(path);
  CountCheck c;
  for (const auto& m : load_measurements(path)) {
    CAPTURE(lines[m.line]);
    REQUIRE(m.kernel.implementation == KernelImplementation::pao_cuda);
    const auto simulated = kernel_warp_instructions(lines[m.line]);
    const auto launches = build_launches(d, m.workload, m.kernel);
    REQUIRE(launches.size() == simulated.size());
    for (std::size_t k = 0; k < launches.size(); ++k) {
      const double error = launches[k].total_warp_instructions() / simulated[k] - 1;
      CAPTURE(k);
      CAPTURE(error);
      c.max_error = std::max(c.max_error, std::fabs(error));
      ++c.kernels;
    }
  }
  return c;
}

}  // namespace

TEST_CASE("sim gpgpusim: the pao-cuda instruction model against GPGPU-Sim's warp instructions") {
  // The microbenchmarks the factors come from: within 3 % (a two-part fit of four lengths and a
  // one-factor fit of the reduce's two merges).
  const CountCheck micro = check_counts("gpgpusim-v100-microbench.csv");
  CHECK(micro.kernels >= 20);
  CHECK(micro.max_error < 0.03);
  // The held-out shapes (head 64, blocks of 32, bf16, an fp8 cache, MHA, MQA, sequences ending
  // mid-block): their instructions scale as the microbenchmarks' did, within 15 %.
  const CountCheck shapes = check_counts("gpgpusim-v100-shapes.csv");
  CHECK(shapes.kernels >= 20);
  CHECK(shapes.max_error < 0.15);
}

TEST_CASE("sim gpgpusim: cycles per warp instruction is the microbenchmarks' in-order rate") {
  // Recomputed from the CSV: each kernel's cycles less the launch latency and less its CTA's
  // dependent load round trips (the model's iterations at iteration_latency_us: they add to the
  // in-order instructions) over its busiest warp's instructions (4 warps per CTA, equal shares),
  // least squares through the origin, over the f16 launches with blocks of 16 (the reference
  // instance; the others' rates relative to it are the in_order factors, which the timing check
  // below covers). pao's kernels take this rate on every device (kPaoCudaCyclesPerWarpInstruction).
  const Device d = load_device("gpgpusim-v100");
  const std::string path = measurements("gpgpusim-v100-microbench.csv");
  const auto lines = lines_of(path);
  const double launch_cycles = d.launch_latency_us * d.clock_ghz * 1e3;
  double xy = 0, xx = 0;
  for (const auto& m : load_measurements(path)) {
    if (m.workload.dtype != pao::DType::f16 || m.workload.kv_cache_dtype != pao::DType::f16 ||
        m.workload.block_size != 16)
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
  CHECK(d.cycles_per_warp_instruction == doctest::Approx(xy / xx).epsilon(0.005));
  CHECK(pao::sim::kPaoCudaCyclesPerWarpInstruction == d.cycles_per_warp_instruction);
  CHECK(load_device("gpgpusim-v100-16sm").cycles_per_warp_instruction == d.cycles_per_warp_instruction);
  // Every microbenchmark launch's time, each instance with its factors: within 8 %.
  ValidationOptions o;
  o.leave_one_group_out = false;
  const ValidationReport r = validate(d, load_measurements(path), o, path);
  CHECK(r.rows.size() >= 70);
  CHECK(r.uncalibrated.max_error <= 0.08);
}

TEST_CASE("sim gpgpusim: the uncalibrated model meets the targets on the grid, the A100 rows no worse") {
  ValidationOptions o;
  o.leave_one_group_out = false;
  for (const char* name : {"gpgpusim-v100", "gpgpusim-v100-16sm"}) {
    CAPTURE(name);
    const std::string path = measurements((std::string(name) + ".csv").c_str());
    const auto rows = load_measurements(path);
    CHECK(rows.size() >= 24);
    const ValidationReport r = validate(load_device(name), rows, o, path);
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
  // The same decode launch: pao's kernels issue 3 to 4 times vLLM's instructions, and take longer.
  Workload decode;
  decode.num_heads = 8;
  decode.num_kv_heads = 2;
  decode.seq_lens = {1024};
  KernelConfig v1 = parse_kernel_spec("v1", {});
  const auto vllm = build_launches(d, decode, v1);
  v1.implementation = KernelImplementation::pao_cuda;
  CHECK(v1.label() == "v1@pao-cuda");
  const auto pao_cuda = build_launches(d, decode, v1);
  const double ratio = pao_cuda[0].total_warp_instructions() / vllm[0].total_warp_instructions();
  CHECK(ratio > 3.0);
  CHECK(ratio < 4.0);
  CHECK(simulate(d, pao_cuda).time_us > simulate(d, vllm).time_us);
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
      "kernel 'v1@cutlass': 'cutlass' is not a kernel implementation (expected vllm or pao-cuda)",
      pao::Error);
  CHECK_THROWS_WITH_AS(
      parse_kernel_implementation("triton", "--implementation"),
      "--implementation: 'triton' is not a kernel implementation (expected vllm or pao-cuda)", pao::Error);
}

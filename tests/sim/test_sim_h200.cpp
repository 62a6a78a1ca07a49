// The simulator against real H200 timings of two implementations of the same decode kernels
// (data/measurements/h200-vllm.csv: vLLM's; h200-pao-cuda.csv: pao's before issue #38's cuts,
// implementation pao-cuda-pre38), one device descriptor for both (docs/simulator.md, "Validation on
// an H200"); and the model's parts those rows rest on: regret, the measured register counts, the
// kernels' in-order rates and their K loads in flight.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pao/core/data_dir.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/instruction_model.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/model/kernel_registers.hpp"
#include "pao/sim/studies/validate.hpp"

using namespace pao::sim;

namespace {

std::string measurements(const char* name) { return (pao::data_dir() / "measurements" / name).string(); }

/// The shipped h200 descriptor with its fitted fields back at the values assumed before any H200
/// row was measured: where a calibration that must not have seen the rows starts.
Device h200_before_fit() {
  Device d = load_device("h200");
  set_device_field(d, "iteration_latency_us", 0.55, "assumed", "test: the pre-fit value");
  set_device_field(d, "cta_dispatch_overhead_us", 0.3, "assumed", "test: the pre-fit value");
  set_device_field(d, "inter_kernel_gap_us", 1.5, "assumed", "test: the pre-fit value");
  set_device_field(d, "issue_efficiency", 0.3, "assumed", "test: the pre-fit value");
  return d;
}

Scores uncalibrated(const Device& d, const char* file) {
  ValidationOptions o;
  o.leave_one_group_out = false;
  const std::string path = measurements(file);
  return validate(d, load_measurements(path), o, path).uncalibrated;
}

}  // namespace

TEST_CASE("sim regret: the measured cost of the predicted pick over the measured best") {
  const std::vector<double> measured = {100, 80, 120, 50, 60};
  // Group {0, 1, 2}: the model predicts row 2 fastest, the best is row 1: 120 / 80 - 1.
  CHECK(group_regret({0, 1, 2}, measured, {30, 20, 10, 0, 0}) == doctest::Approx(0.5));
  CHECK(group_regret({0, 1, 2}, measured, {30, 10, 20, 0, 0}) == 0.0);
  CHECK(group_regret({3, 4}, measured, {0, 0, 0, 2, 1}) == doctest::Approx(0.2));
  // error_report averages it over the groups of >= 2 kernels.
  std::vector<Measurement> rows(5);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].time_us = measured[i];
    rows[i].group = i < 3 ? 0 : 1;
  }
  const ErrorReport e = error_report(rows, {30, 20, 10, 2, 1});
  CHECK(e.decisions == 2);
  CHECK(e.decision_accuracy == 0.0);
  CHECK(e.mean_regret == doctest::Approx(0.35));
  CHECK(e.max_regret == doctest::Approx(0.5));
}

TEST_CASE("sim registers: the decode kernels' measured register counts set their occupancy") {
  Workload w;
  w.num_heads = 16;
  w.num_kv_heads = 2;
  w.head_size = 256;
  w.seq_lens = {2048};
  // ptxas, sm_90 (data/measurements/sm90-decode-registers.md).
  CHECK(decode_registers_per_thread(KernelImplementation::vllm, pao::KernelVariant::v1, w) == 164);
  CHECK(decode_registers_per_thread(KernelImplementation::vllm, pao::KernelVariant::v2, w) == 126);
  CHECK(decode_registers_per_thread(KernelImplementation::pao_cuda_pre38, pao::KernelVariant::v1, w) == 120);
  CHECK(decode_registers_per_thread(KernelImplementation::pao_cuda, pao::KernelVariant::v2, w) == 96);
  // An instance nobody compiled takes the nearest one of its dtypes (head 120: head 128's), and
  // dtypes nobody compiled take f16's.
  w.head_size = 120;
  CHECK(decode_registers_per_thread(KernelImplementation::vllm, pao::KernelVariant::v1, w) == 96);
  w.dtype = w.kv_cache_dtype = pao::DType::f32;
  CHECK(decode_registers_per_thread(KernelImplementation::vllm, pao::KernelVariant::v2, w) == 96);
  // 164 registers x 128 threads: 3 CTAs on an sm_90 SM (65536 registers, 256 per warp unit).
  const Device d = load_device("h200");
  w.head_size = 256;
  w.dtype = w.kv_cache_dtype = pao::DType::f16;
  KernelConfig v1;
  v1.kind = pao::KernelVariant::v1;
  const auto launches = build_launches(d, w, v1);
  CHECK(launches.front().resources.registers_per_thread == 164);
  CHECK(compute_occupancy(d, launches.front().resources).ctas_per_sm == 3);
}

TEST_CASE("sim pao-cuda: each generation's in-order rate and K loads in flight") {
  // Before issue #38's cuts pao's kernels ran at their own in-order rate on every device (measured
  // under GPGPU-Sim, tests/sim/test_sim_gpgpusim.cpp) and waited once per 4 K vectors; since, they
  // issue a token's K loads first and take the device's rate, as vLLM's do.
  CHECK(implementation_cycles_per_warp_instruction(KernelImplementation::vllm) == 0.0);
  CHECK(implementation_cycles_per_warp_instruction(KernelImplementation::pao_cuda) == 0.0);
  CHECK(implementation_cycles_per_warp_instruction(KernelImplementation::pao_cuda_pre38) ==
        kPaoCudaPre38CyclesPerWarpInstruction);
  const Device d = load_device("h200");
  Workload w;
  w.num_heads = 32;
  w.num_kv_heads = 8;
  w.seq_lens = {512};
  struct Expected {
    KernelImplementation implementation;
    std::int32_t head_size, loads_in_turn;
  };
  // Head 128 over f16: thread groups of 2 lanes, vectors of 4 elements: 16 vectors a lane, which
  // pao's kernels load at once; head 192: 24, two batches of 12 (8 bytes each: 96 bytes); head
  // 256: 32, two of 16 (128 bytes); over an fp8 cache, batches of at most 8: four at head 256.
  const pao::DecodeGeometry g = pao::DecodeGeometry::make(32, 128, 16, 2);
  CHECK(g.vec_size == 4);
  CHECK(128 / g.dims_per_step == 16);
  for (const auto& e :
       {Expected{KernelImplementation::vllm, 128, 1}, Expected{KernelImplementation::vllm, 256, 1},
        Expected{KernelImplementation::pao_cuda, 128, 1}, Expected{KernelImplementation::pao_cuda, 192, 2},
        Expected{KernelImplementation::pao_cuda, 256, 2},
        Expected{KernelImplementation::pao_cuda_pre38, 128, 16 / kPaoCudaPre38KLoadsInFlight},
        Expected{KernelImplementation::pao_cuda_pre38, 256, 32 / kPaoCudaPre38KLoadsInFlight}}) {
    CAPTURE(to_string(e.implementation));
    CAPTURE(e.head_size);
    w.head_size = e.head_size;
    KernelConfig k;
    k.kind = pao::KernelVariant::v1;
    k.implementation = e.implementation;
    const auto plan = decode_plan(d, w, k);
    const auto cost = decode_instruction_cost(w, plan, e.implementation);
    CHECK(cost.qk_loads_in_turn == e.loads_in_turn);
    const auto launches = build_launches(d, w, k);
    // 32 blocks over 4 warps: 8 blocks a warp, each a Q.K (its round trips) and a P.V, + 2.
    CHECK(launches.front().ctas.front().iterations == 8 * (cost.qk_loads_in_turn + 1) + 2);
    CHECK(launches.front().cycles_per_warp_instruction ==
          implementation_cycles_per_warp_instruction(e.implementation));
  }
  // Blocks of 32 (vectors of 8 elements, which in one batch took 254 registers) and integer
  // caches (a dequantisation per element) keep the unroll of 4: 16 vectors, 4 round trips.
  w.head_size = 128;
  KernelConfig k;
  k.implementation = KernelImplementation::pao_cuda;
  w.block_size = 32;
  CHECK(decode_instruction_cost(w, decode_plan(d, w, k), k.implementation).qk_loads_in_turn == 4);
  w.block_size = 16;
  w.kv_cache_dtype = pao::DType::u8;
  CHECK(decode_instruction_cost(w, decode_plan(d, w, k), k.implementation).qk_loads_in_turn == 4);
  w.head_size = 256;
  w.kv_cache_dtype = pao::DType::fp8_e4m3;
  CHECK(decode_instruction_cost(w, decode_plan(d, w, k), k.implementation).qk_loads_in_turn == 4);
}

TEST_CASE("sim h200: one descriptor explains vLLM's and pao's kernels") {
  // The shipped descriptor, fitted on both files (its fitted fields say so and name the command).
  const Device d = load_device("h200");
  CHECK(d.provenance.at("iteration_latency_us").confidence == "fitted");
  CHECK(d.provenance.at("iteration_latency_us").source.find("h200-pao-cuda.csv") != std::string::npos);
  CHECK(d.provenance.at("dram_achievable_gbps").confidence == "assumed");  // no row pins it
  const Scores vllm = uncalibrated(d, "h200-vllm.csv");
  CHECK(vllm.decisions == 7);
  CHECK(vllm.decision_accuracy * 7 >= 6 - 1e-9);
  CHECK(vllm.mape <= 0.10);
  CHECK(vllm.mean_regret <= 0.03);
  CHECK(vllm.max_regret <= 0.10);
  const Scores pao = uncalibrated(d, "h200-pao-cuda.csv");
  CHECK(pao.mape <= 0.10);
  CHECK(pao.mean_regret <= 0.03);
}

TEST_CASE("sim h200: calibrated on one implementation, the descriptor predicts the other") {
  // From the values assumed before the H200 rows existed, fit on one file, score the other: the
  // structure (latencies, occupancy, issue) is the device's, the instruction counts the kernels'.
  CalibrationOptions c;
  c.holdout_fraction = 0;
  c.max_iterations = 15;
  const auto fit_on = [&](const char* file) {
    const std::string path = measurements(file);
    return calibrate(h200_before_fit(), load_measurements(path), c, path).calibrated;
  };
  const Scores pao_from_vllm = uncalibrated(fit_on("h200-vllm.csv"), "h200-pao-cuda.csv");
  CHECK(pao_from_vllm.mape <= 0.25);
  CHECK(pao_from_vllm.mean_regret <= 0.05);
  const Scores vllm_from_pao = uncalibrated(fit_on("h200-pao-cuda.csv"), "h200-vllm.csv");
  CHECK(vllm_from_pao.mape <= 0.25);
  CHECK(vllm_from_pao.mean_regret <= 0.05);
}

TEST_CASE("[slow] sim h200: leave-one-group-out on vLLM's rows meets the targets") {
  ValidationOptions o;
  o.calibration.max_iterations = 15;
  const std::string path = measurements("h200-vllm.csv");
  const auto r = validate(h200_before_fit(), load_measurements(path), o, path);
  CHECK(r.logo.mape <= 0.10);
  CHECK(r.logo.decision_accuracy * 7 >= 6 - 1e-9);
  CHECK(r.logo.mean_regret <= 0.03);
  CHECK(r.logo.max_regret <= 0.10);
}

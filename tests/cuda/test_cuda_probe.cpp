// CPU tests of pao-cuda-probe's host side (issue #37): per-SM rates from the kernels' CTA records
// (a span only ever between readings of one SM's clock), the most CTAs resident at once against
// a brute-force count, and the descriptor a run's measurements make: measured fields say so and
// carry the probe's command, the units are converted right, unmeasured fields keep the base's
// provenance and are listed, and the result is a descriptor `pao sim --device` loads.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/sim/model/device.hpp"
#include "probe/probe_descriptor.hpp"
#include "probe/probe_records.hpp"

using namespace pao;
using namespace pao::cuda::probe;

TEST_CASE("probe records: rates are taken per SM and summed") {
  // SM 3: two CTAs over cycles 1000..1400, 800 bytes -> 2 bytes/cycle. SM 7: one CTA, its clock far
  // away (SM clocks are not synchronised), 100 bytes over 100 cycles -> 1 byte/cycle.
  const std::vector<CtaRecord> records = {
      {3, 0, 1000, 1300, 400}, {7, 0, 900000, 900100, 100}, {3, 0, 1100, 1400, 400}};
  const auto spans = spans_by_sm(records);
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].sm == 3);
  CHECK(spans[0].cycles == 400);
  CHECK(spans[0].work == 800);
  CHECK(spans[0].ctas == 2);
  CHECK(spans[1].sm == 7);
  CHECK(device_rate_per_cycle(spans) == doctest::Approx(3.0));
  // A third SM at 5 bytes/cycle: the median of 1, 2, 5 is 2.
  auto more = records;
  more.push_back({9, 0, 0, 10, 50});
  const auto three = spans_by_sm(more);
  CHECK(median_sm_rate_per_cycle(three) == doctest::Approx(2.0));
  CHECK(device_rate_per_cycle(spans_by_sm(std::vector<CtaRecord>{})) == 0);
}

TEST_CASE("probe records: the most CTAs resident at once on one SM, against a count at every cycle") {
  SUBCASE("a slot freed at a cycle is taken at the same cycle") {
    const std::vector<CtaRecord> r = {{0, 0, 0, 10, 1}, {0, 0, 5, 15, 1}, {0, 0, 10, 20, 1}, {1, 0, 5, 6, 1}};
    CHECK(peak_concurrent_ctas(r) == 2);
  }
  SUBCASE("random intervals on four SMs") {
    std::mt19937 rng(37);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<CtaRecord> r;
      for (int i = 0; i < 40; ++i) {
        const std::uint64_t start = rng() % 200, length = 1 + rng() % 60;
        r.push_back({static_cast<std::uint32_t>(rng() % 4), 0, start, start + length, 1});
      }
      int brute = 0;
      for (std::uint32_t sm = 0; sm < 4; ++sm)
        for (std::uint64_t t = 0; t < 300; ++t)
          brute = std::max(brute, static_cast<int>(std::count_if(r.begin(), r.end(), [&](const CtaRecord& c) {
                             return c.sm == sm && c.start <= t && t < c.end;
                           })));
      CHECK(peak_concurrent_ctas(r) == brute);
    }
  }
}

namespace {

DriverFacts h200_like_facts() {
  DriverFacts f;
  f.name = "NVIDIA H200";
  f.cc_major = 9;
  f.cc_minor = 0;
  f.num_sms = 132;
  f.warp_size = 32;
  f.max_threads_per_sm = 2048;
  f.max_ctas_per_sm = 32;
  f.max_threads_per_cta = 1024;
  f.registers_per_sm = 65536;
  f.shared_per_sm_bytes = 233472;
  f.max_shared_per_cta_bytes = 232448;
  f.shared_reserved_per_cta_bytes = 1024;
  f.l2_size_bytes = 62914560;
  f.clock_khz = 1980000;
  f.memory_clock_khz = 3201000;
  f.memory_bus_bits = 6144;
  return f;
}

}  // namespace

TEST_CASE("probe descriptor: measured fields say measured, with the command, in the descriptor's units") {
  const sim::Device base = sim::load_device("h200");
  const DriverFacts f = h200_like_facts();
  Measurements m;
  m.clock_ghz = 1.755;
  m.peak_ctas_per_sm = 32;
  m.peak_threads_per_sm = 2048;
  m.dependent_fma_cycles = 4.1;
  m.fma_per_cycle_per_sm = 128;
  m.mma_flops_per_cycle_per_sm = 2048;
  m.issue_mix_ipc_per_sm = 2.2;
  m.dram_curve = {{1024, 300}, {65536, 4100}, {262144, 4000}};
  m.one_sm_gbps = 120;
  m.l2_gbps = 9000;
  m.iteration_cycles = 1404;
  m.launch_and_sync_us = 7.5;
  m.kernel_gap_us = 2.25;
  m.cta_dispatch_us = 0.05;
  const std::string command = "pao-cuda-probe --out h200.json";
  const sim::Device d = probe_descriptor(base, f, m, "nvidia-h200-probed", command, "2026-12-04");

  CHECK(d.name == "nvidia-h200-probed");
  CHECK(d.clock_ghz == doctest::Approx(1.755));
  CHECK(d.fp32_tflops == doctest::Approx(128.0 * 2 * 1.755e9 * 132 / 1e12));
  CHECK(d.fp16_tflops == doctest::Approx(2048.0 * 1.755e9 * 132 / 1e12));
  CHECK(d.issue_efficiency == doctest::Approx(2.2 / 4));
  CHECK(d.dram_achievable_gbps == doctest::Approx(4100));  // the top of the curve, not its last point
  CHECK(d.dram_peak_gbps == doctest::Approx(2.0 * 3201e6 * 768 / 1e9));
  CHECK(d.iteration_latency_us == doctest::Approx(1404 / 1755.0));
  CHECK(d.cycles_per_warp_instruction == doctest::Approx(4.1));
  CHECK(d.l2_size_bytes == 62914560);
  for (const char* key :
       {"clock_ghz", "fp32_tflops", "fp16_tflops", "issue_efficiency", "dram_achievable_gbps",
        "sm_bandwidth_cap_gbps", "l2_bandwidth_gbps", "iteration_latency_us", "launch_latency_us",
        "inter_kernel_gap_us", "cta_dispatch_overhead_us", "max_ctas_per_sm", "max_threads_per_sm",
        "cycles_per_warp_instruction"}) {
    CAPTURE(key);
    CHECK(d.provenance.at(key).confidence == "measured");
    CHECK(d.provenance.at(key).source.find(command) != std::string::npos);
  }
  CHECK(d.provenance.at("num_sms").source.find("cudaDevAttrMultiProcessorCount") != std::string::npos);
  CHECK(d.provenance.at("dram_achievable_gbps").source.find("1 KiB 300 GB/s, 64 KiB 4100 GB/s") !=
        std::string::npos);
  // Only the framework's host cost and the instruction expansions (what the compiler makes of vLLM's
  // kernels: no probe measures them) are left from the base, and the description says so.
  CHECK(d.provenance.at("host_op_overhead_us").source == base.provenance.at("host_op_overhead_us").source);
  CHECK(d.instruction_expansion_cta == base.instruction_expansion_cta);
  CHECK(d.description.find("kept from 'h200': host_op_overhead_us, instruction_expansion_tokens, "
                           "instruction_expansion_cta, instruction_expansion_reduce_copy, "
                           "instruction_expansion_reduce_merge.") != std::string::npos);
  // What it writes is a descriptor pao sim loads as it is.
  const sim::Device again = sim::parse_device(sim::device_to_json(d), "probe.json");
  CHECK(again.fp32_tflops == doctest::Approx(d.fp32_tflops));
  CHECK(again.provenance.at("fp32_tflops").confidence == "measured");
}

TEST_CASE("probe descriptor: a run that measured nothing changes only what the driver reports") {
  const sim::Device base = sim::load_device("h200");
  DriverFacts f = h200_like_facts();
  f.shared_reserved_per_cta_bytes = -1;  // the driver gave no answer: the base's value stays
  const sim::Device d =
      probe_descriptor(base, f, Measurements{}, "x", "pao-cuda-probe --simulator", "2026-12-04");
  CHECK(d.clock_ghz == doctest::Approx(1.98));
  CHECK(d.provenance.at("clock_ghz").source.find("cudaDevAttrClockRate") != std::string::npos);
  CHECK(d.fp32_tflops == base.fp32_tflops);
  CHECK(d.provenance.at("fp32_tflops").confidence == base.provenance.at("fp32_tflops").confidence);
  CHECK(d.shared_reserved_per_cta_bytes == base.shared_reserved_per_cta_bytes);
  CHECK(d.description.find("fp32_tflops") != std::string::npos);
  CHECK(d.description.find("shared_reserved_per_cta_bytes") != std::string::npos);
}

TEST_CASE("probe descriptor: a measurement that breaks a descriptor rule is refused, named") {
  const sim::Device base = sim::load_device("h200");
  Measurements m;
  m.dram_curve = {{65536, 9000}};  // above the driver's peak of 4.9 TB/s
  CHECK_THROWS_WITH_AS(probe_descriptor(base, h200_like_facts(), m, "x", "pao-cuda-probe", "2026-12-04"),
                       doctest::Contains("dram_achievable"), Error);
}

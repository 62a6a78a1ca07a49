// Validation against measurements: the published CSV parses with its sources and loop timing;
// the loop model's limits (cold: the span plus a gap or the host's cost of an op; never slower
// L2-warm than DRAM-cold; a working set between one block and the pool; the L2 hit fraction and
// the blended bandwidth between DRAM's and L2's); validate scores a perfect model as perfect and
// leave-one-group-out calibration recovers a mis-set bandwidth.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/studies/validate.hpp"

using namespace pao::sim;

namespace {

Measurement decode(std::int32_t seqs, std::int32_t len, const char* kernel, Timing timing) {
  Measurement m;
  m.workload.num_seqs = seqs;
  m.workload.num_heads = 8;
  m.workload.num_kv_heads = 8;
  m.workload.head_size = 128;
  m.workload.seq_lens.assign(static_cast<std::size_t>(seqs), len);
  m.kernel = parse_kernel_spec(kernel, {});
  m.timing = timing;
  return m;
}

/// Measurements "taken" on `truth`: groups of V1 and V2 on a few small workloads.
std::string csv_from(const Device& truth) {
  std::ostringstream os;
  os << "kernel,num_seqs,num_heads,head_size,seq_len,timing,time_us,group,source\n";
  // 64 sequences: a bandwidth-bound group, so that every LOGO fold keeps one to fit the bandwidth on.
  for (int seqs : {1, 4, 64})
    for (int len : {512, 4096})
      for (const char* k : {"v1", "v2"})
        os << k << "," << seqs << ",8,128," << len << ",gpu,"
           << predict_time(truth, decode(seqs, len, k, Timing::gpu)) << ",b" << seqs << "-s" << len
           << ",test\n";
  return os.str();
}

}  // namespace

TEST_CASE("sim validate: the published vLLM measurements parse, with loop timing and their sources") {
  const auto rows = load_measurements((pao::data_dir() / "measurements" / "published-vllm.csv").string());
  REQUIRE(rows.size() == 18);
  std::size_t groups = 0;
  for (const auto& m : rows) {
    CHECK(m.timing == Timing::loop);
    CHECK_FALSE(m.source.empty());
    CHECK_FALSE(m.gpu.empty());
    groups = std::max(groups, m.group + 1);
  }
  CHECK(groups == 9);
  CHECK(rows[0].group == rows[1].group);  // V1 and V2 of one workload
  CHECK(rows[0].group_name == "pr2744-a100-40gb-pcie-b1-s1024");
  CHECK_THROWS_WITH_AS(parse_measurements("kernel,num_seqs,num_heads,head_size,seq_len,time_us,timing\n"
                                          "v1,1,8,128,512,10,wall\n",
                                          "t.csv"),
                       doctest::Contains("t.csv:2: timing: 'wall' must be gpu, host or loop"), pao::Error);
}

TEST_CASE("sim validate: the loop model's limits") {
  const Device d = load_device("a100-40gb");
  Device no_l2 = d;
  set_device_field(no_l2, "l2_size_bytes", 0, "assumed", "test: no L2");
  for (const int seqs : {1, 4, 64})
    for (const int len : {512, 4096}) {
      CAPTURE(seqs);
      CAPTURE(len);
      const Measurement gpu = decode(seqs, len, "v2", Timing::gpu);
      Measurement loop = decode(seqs, len, "v2", Timing::loop);
      // Bounded: a working set of at least one block and at most the pool (or the blocks read).
      const double block = 2.0 * 16 * 8 * 128 * 2;
      const double ws = loop_working_set_bytes(loop);
      CHECK(ws >= block);
      CHECK(ws <= 1024 * block * (1 + 1e-12));
      CHECK(ws <= seqs * std::ceil(len / 16.0) * block * (1 + 1e-12));
      // The hit fraction: all of a working set L2 holds, L2's share of a larger one, none cold.
      const double hit = loop_l2_hit_fraction(d, loop);
      CHECK(hit == doctest::Approx(std::min(1.0, static_cast<double>(d.l2_size_bytes) / ws)));
      CHECK(loop_l2_hit_fraction(d, gpu) == 0.0);
      CHECK(loop_l2_hit_fraction(no_l2, loop) == 0.0);
      // Cold (no L2): the span plus the gap to the next launch, or the host's cost of an op; a
      // gpu-timed row is the span plus the gap before it (the start event's), the same span.
      const double cold = predict_time(no_l2, loop);
      CHECK(cold == doctest::Approx(std::max(predict_time(d, gpu), d.host_op_overhead_us)));
      CHECK(cold >= d.host_op_overhead_us);
      // Monotone: an L2-warm pool is never slower than a cold one; a smaller pool never slower.
      CHECK(predict_time(d, loop) <= cold * (1 + 1e-12));
      Measurement small_pool = loop;
      small_pool.pool_blocks = 16;
      CHECK(loop_l2_hit_fraction(d, small_pool) >= hit);
      CHECK(predict_time(d, small_pool) <= predict_time(d, loop) * (1 + 1e-12));
    }
  // More blocks drawn: a larger working set, a smaller hit fraction.
  Measurement a = decode(1, 512, "v1", Timing::loop), b = decode(4, 512, "v1", Timing::loop);
  a.pool_blocks = b.pool_blocks = 1 << 20;
  CHECK(loop_working_set_bytes(a) < loop_working_set_bytes(b));
  Device small_l2 = d;
  set_device_field(small_l2, "l2_size_bytes", 1 << 20, "assumed", "test: 1 MiB of L2");
  CHECK(loop_l2_hit_fraction(small_l2, a) > loop_l2_hit_fraction(small_l2, b));
  // The blended bandwidth: DRAM's with no hits, L2's with all, monotone between.
  CHECK(loop_bandwidth_gbps(d, 0.0) == doctest::Approx(d.dram_achievable_gbps));
  CHECK(loop_bandwidth_gbps(d, 1.0) == doctest::Approx(d.l2_bandwidth_gbps));
  double prev = 0;
  for (double h = 0; h <= 1.0; h += 0.125) {
    const double bw = loop_bandwidth_gbps(d, h);
    CHECK(bw >= prev);
    CHECK(bw <= d.l2_bandwidth_gbps * (1 + 1e-12));
    prev = bw;
  }
}

TEST_CASE("sim validate: a perfect model scores perfectly; LOGO calibration recovers a mis-set bandwidth") {
  const Device truth = load_device("a100-40gb");
  const auto rows = parse_measurements(csv_from(truth), "truth.csv");
  ValidationOptions o;
  o.leave_one_group_out = false;
  const auto perfect = validate(truth, rows, o, "truth.csv");
  CHECK(perfect.uncalibrated.mape < 1e-5);  // the CSV's 6 significant digits
  CHECK(perfect.uncalibrated.max_ratio_error < 1e-5);
  CHECK(perfect.uncalibrated.decision_accuracy == doctest::Approx(1));
  CHECK(perfect.groups.size() == 6);
  CHECK(format_validation(perfect, truth).find("b4-s4096") != std::string::npos);

  Device wrong = truth;
  wrong.dram_achievable_gbps *= 0.5;  // the model thinks the chip has half the bandwidth
  o.leave_one_group_out = true;
  o.calibration.parameters = {"dram_achievable_gbps"};
  o.calibration.max_iterations = 10;
  const auto r = validate(wrong, rows, o, "truth.csv");
  REQUIRE(r.logo_run);
  CHECK(r.uncalibrated.mape > 0.05);
  INFO("uncalibrated MAPE " << r.uncalibrated.mape << ", LOGO " << r.logo.mape);
  CHECK(r.logo.mape < 0.01);  // every fold keeps a bandwidth-bound group: the truth comes back
  for (const auto& row : r.rows) CHECK(row.predicted_logo > 0);
}

// The instruction-issue term's analytic limits: counts grow with the work (tokens, head size, an
// fp8 cache's dequantisation), V2 with one partition issues V1's instructions plus its statistics,
// a warp twice as wide issues about half the warp instructions per block, and the engine never
// beats the device's issue rate, reaches it on a large grid and is monotone in issue_efficiency.
#include <doctest/doctest.h>

#include <vector>

#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/instruction_model.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "support/sim_grids.hpp"

using namespace pao::sim;

namespace {

Workload decode_workload(std::int32_t seqs, std::int32_t len, std::int32_t head_size = 128,
                         pao::DType kv = pao::DType::f16) {
  Workload w;
  w.num_seqs = seqs;
  w.num_heads = 8;
  w.num_kv_heads = 8;
  w.head_size = head_size;
  w.seq_lens.assign(static_cast<std::size_t>(seqs), len);
  w.kv_cache_dtype = kv;
  return w;
}

double launch_instructions(const Device& d, const Workload& w, const char* kernel) {
  double sum = 0;
  for (const auto& l : build_launches(d, w, parse_kernel_spec(kernel, {})))
    sum += l.total_warp_instructions();
  return sum;
}

}  // namespace

TEST_CASE("sim instructions: counts grow with tokens, head size and fp8 dequantisation") {
  const Device d = load_device("a100-40gb");
  double prev = 0;
  // Whole blocks: vLLM computes every slot of a loaded block, so 1 and 16 tokens cost the same.
  CHECK(launch_instructions(d, decode_workload(1, 1), "v1") ==
        launch_instructions(d, decode_workload(1, 16), "v1"));
  for (const int len : {1, 17, 100, 512, 4096}) {
    CAPTURE(len);
    const double n = launch_instructions(d, decode_workload(1, len), "v1");
    CHECK(n > prev);
    prev = n;
  }
  prev = 0;
  for (const int hs : {32, 64, 128, 256}) {
    CAPTURE(hs);
    const double n = launch_instructions(d, decode_workload(2, 1024, hs), "v1");
    CHECK(n > prev);
    prev = n;
  }
  CHECK(launch_instructions(d, decode_workload(2, 1024, 128, pao::DType::fp8_e4m3), "v1") >
        launch_instructions(d, decode_workload(2, 1024), "v1"));
  // Empty V2 partitions issue nothing: a shorter sequence in a batch padded to a long max_seq_len.
  Workload ragged = decode_workload(2, 4096);
  ragged.seq_lens = {4096, 100};
  const auto launches = build_launches(d, ragged, parse_kernel_spec("v2:512", {}));
  std::size_t empty = 0;
  for (const auto& cta : launches[0].ctas)
    if (cta.dram_bytes == 0) {
      ++empty;
      CHECK(cta.warp_instructions == 0);
    }
  CHECK(empty > 0);
}

TEST_CASE("sim instructions: V2 with one partition issues V1's instructions plus its statistics") {
  const Device d = load_device("a100-40gb");
  for (const int len : {16, 300, 512}) {
    CAPTURE(len);
    const Workload w = decode_workload(3, len);
    const auto v1 = build_launches(d, w, parse_kernel_spec("v1", {}));
    const auto v2 = build_launches(d, w, parse_kernel_spec("v2:512", {}));
    REQUIRE(v2.size() == 2);
    REQUIRE(v1[0].ctas.size() == v2[0].ctas.size());
    for (std::size_t i = 0; i < v1[0].ctas.size(); ++i)
      CHECK(v2[0].ctas[i].warp_instructions == doctest::Approx(v1[0].ctas[i].warp_instructions + 4));
    // The reduce of one partition copies tmp_out: a few instructions, far fewer than the attention.
    CHECK(v2[1].total_warp_instructions() > 0);
    CHECK(v2[1].total_warp_instructions() < 0.1 * v1[0].total_warp_instructions());
  }
  // More partitions: the same blocks, more CTAs' fixed costs, and a reduce that reads them.
  const Workload w = decode_workload(3, 8192);
  CHECK(launch_instructions(d, w, "v2:512") > launch_instructions(d, w, "v2:1024"));
  CHECK(launch_instructions(d, w, "v2:1024") > launch_instructions(d, w, "v1"));
}

TEST_CASE("sim instructions: a 64-wide warp issues about half the warp instructions per block") {
  const Workload w = decode_workload(1, 1024);
  Device narrow = load_device("a100-40gb");
  Device wide = load_device("bi-v100");
  for (const int block : {8, 16, 32}) {
    CAPTURE(block);
    Workload wb = w;
    wb.block_size = block;
    const auto cost32 = decode_instruction_cost(wb, decode_plan(narrow, wb, parse_kernel_spec("v1", {})));
    const auto cost64 = decode_instruction_cost(wb, decode_plan(wide, wb, parse_kernel_spec("v1", {})));
    const double ratio =
        (cost64.qk_per_block + cost64.pv_per_block) / (cost32.qk_per_block + cost32.pv_per_block);
    CHECK(ratio > 0.4);
    CHECK(ratio < 0.75);
  }
}

TEST_CASE("sim instructions: the engine is bounded by the issue rate and reaches it on a large grid") {
  const Device d = pao::test::device_without_overheads("a100-40gb", 4);
  // Instruction-heavy CTAs that move a few bytes each: issue-bound.
  const double per_cta = 2e5;  // warp instructions
  const Launch l = pao::test::uniform_grid(4 * 8 * 10, CtaWork{1000, 0, 1, -1, -1, -1, per_cta});
  const std::vector<Launch> ls = {l};
  const SimResult r = simulate(d, ls);
  const double bound_us = l.total_warp_instructions() / (d.num_sms * d.per_sm_issue_rate()) * 1e6;
  CHECK(r.kernels[0].busy_us >= bound_us * (1 - 1e-9));
  CHECK(r.kernels[0].busy_us == doctest::Approx(bound_us).epsilon(1e-6));
  CHECK(r.kernels[0].issue_utilisation == doctest::Approx(1.0).epsilon(1e-6));
  // A bandwidth-bound launch leaves issue slots idle, and no launch exceeds them.
  for (const char* kernel : {"v1", "v2:512"}) {
    const Device a100 = load_device("a100-40gb");
    Workload mha = decode_workload(64, 4096);
    const auto bw = simulate(a100, build_launches(a100, mha, parse_kernel_spec(kernel, {})));
    for (const auto& k : bw.kernels) CHECK(k.issue_utilisation <= 1.0 + 1e-9);
    CHECK(bw.kernels[0].issue_utilisation < 0.9);
  }
  // Monotone in issue_efficiency, for synthetic and for real decode launches.
  double prev = 1e300;
  for (const double eff : {0.05, 0.1, 0.3, 0.6, 1.0}) {
    CAPTURE(eff);
    Device e = load_device("a100-40gb");
    set_device_field(e, "issue_efficiency", eff, "assumed", "test");
    const auto launches = build_launches(e, decode_workload(64, 4096), parse_kernel_spec("v1", {}));
    const double t = simulate(e, launches).time_us;
    CHECK(t <= prev * (1 + 1e-12));
    prev = t;
  }
}

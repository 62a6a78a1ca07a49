// pao-sim-bench: the simulator's speed. Prints CTA events per second on one core for a few
// representative launches (events = dispatches, starts of streaming, completions; each CTA makes
// up to three), one of them timed with its launch building as `pao sim run` does it, and the wall
// time of a 10,000-configuration sweep on 2 cores. Ratios and rates, never pass/fail.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <new>
#include <string>
#include <vector>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/studies/sweep.hpp"
#include "tool_start.hpp"

using namespace pao::sim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct EngineCase {
  const char* device;
  const char* kernel;
  std::int32_t num_seqs, num_heads, num_kv_heads, seq_len;
  const char* what;
  bool with_build = false;  // the time includes build_launches() (plan and per-CTA work)
};

/// Both parts of the benchmark; the tables on stdout.
int run_benchmarks(bool quick) {
  std::printf("pao-sim-bench%s\n\n1. engine speed, one core (launch building excluded unless incl. build)\n",
              quick ? " (quick)" : "");
  std::printf("%-10s %-8s %-34s %9s %10s %8s %12s %12s\n", "device", "kernel", "workload", "CTAs", "events",
              "sec", "events/s", "CTAs/s");
  const std::vector<EngineCase> cases = {
      {"bi-v100", "v2:512", 64, 32, 32, 32768, "bandwidth-bound, 32 CTAs/SM"},
      {"bi-v100", "v1", 256, 32, 32, 2048, "latency-bound, smem-limited"},
      {"bi-v100", "fallback", 16, 32, 32, 8192, "thousands of small launches"},
      {"a100-40gb", "v2:512", 64, 32, 32, 32768, "108 SMs"},
      {"h200", "v2:256", 64, 32, 32, 32768, "132 SMs"},
      // 4.2 M issue-bound CTAs (GQA: a CTA's rate depends on its SM's other CTAs), built and run
      // as by `pao sim run --kernel v2 --partition-size 512 --num-seqs 256 --num-heads 64
      // --num-kv-heads 8 --seq-len 131072` (head size 128, blocks of 16, f16).
      {"bi-v100", "v2:512", 256, 64, 8, 131072, "incl. build", true},
  };
  double log_sum = 0;
  for (const auto& c : cases) {
    const Device d = load_device(c.device);
    Workload w;
    w.num_seqs = quick ? std::max(1, c.num_seqs / 8) : c.num_seqs;
    w.num_heads = c.num_heads;
    w.num_kv_heads = c.num_kv_heads;
    w.seq_lens.assign(static_cast<std::size_t>(w.num_seqs), c.seq_len);
    const KernelConfig kernel = parse_kernel_spec(c.kernel, {});
    auto t0 = std::chrono::steady_clock::now();
    const auto launches = build_launches(d, w, kernel);
    if (!c.with_build) t0 = std::chrono::steady_clock::now();
    std::int64_t ctas = 0;
    for (const auto& l : launches) ctas += static_cast<std::int64_t>(l.ctas.size());
    const SimResult r = simulate(d, launches);
    const double s = seconds_since(t0);
    char wl[64];
    if (c.num_kv_heads == c.num_heads) {
      std::snprintf(wl, sizeof wl, "%dx%d len %d (%s)", w.num_seqs, w.num_heads, c.seq_len, c.what);
    } else {
      std::snprintf(wl, sizeof wl, "%dx%d/%d len %d (%s)", w.num_seqs, w.num_heads, c.num_kv_heads, c.seq_len,
                    c.what);
    }
    std::printf("%-10s %-8s %-34.34s %9lld %10lld %8.3f %12.3g %12.3g\n", c.device, c.kernel, wl,
                static_cast<long long>(ctas), static_cast<long long>(r.events), s, r.events / s, ctas / s);
    log_sum += std::log(r.events / s);
  }
  std::printf("geometric mean: %.3g CTA events/s on one core (target >= 1e6)\n\n",
              std::exp(log_sum / static_cast<double>(cases.size())));

  // 2. A 10,000-point sweep: 5 kernels x 8 batch sizes x 2 head counts x 125 lengths.
  SweepSpec spec;
  spec.device = load_device("bi-v100");
  spec.base.num_seqs = 1;
  spec.base.num_heads = 32;
  spec.base.num_kv_heads = 32;
  spec.base.seq_lens = {1};
  for (const char* k : {"v1", "v2:256", "v2:512", "v2:1024", "v2:2048"})
    spec.kernels.push_back(parse_kernel_spec(k, {}));
  spec.axes = {parse_axis(quick ? "seq-len=256:3200:+256" : "seq-len=256:32000:+256"),
               parse_axis("num-seqs=1:128:x2"), parse_axis("num-heads=8,16")};
  spec.threads = 2;
  std::size_t configs = spec.kernels.size();
  for (const auto& a : spec.axes) configs *= a.values.size();
  std::printf(
      "2. sweep of %zu configurations (%s: kernels v1 v2-256/512/1024/2048 x num-seqs 1..128 x num-heads "
      "8,16 x "
      "seq-len %s) on 2 threads\n",
      configs, spec.device.name.c_str(), quick ? "256..3200" : "256..32000");
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  const auto points = run_sweep(spec);
  const double s = seconds_since(t0);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::int64_t ctas = 0;
  for (const auto& p : points) ctas += p.ctas;
  std::printf("   %.2f s wall (target < 60 s), %.0f configurations/s, %lld attention CTAs simulated\n", s,
              static_cast<double>(points.size()) / s, static_cast<long long>(ctas));
  // On a shared machine the wall time includes waiting for a core; CPU time / 2 is what two
  // free cores would take.
  std::printf("   %.2f s CPU over both threads (%.0f%% of 2 cores while it ran)\n", cpu, 100 * cpu / (2 * s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "pao-sim-bench: the simulator's speed: CTA events per second on one core for a few launches, and the "
      "wall time of a 10,000-configuration sweep on 2 cores (rates, never pass/fail; a few minutes)",
      "pao-sim-bench"};
  bool quick = false;
  app.add_flag("--quick", quick, "smaller launches and a shorter sweep (seconds; the CI smoke run)");
  if (const auto status = pao::cli::parse_command_line(app, argc, argv)) return *status;
  if (const auto status = pao::cli::start_tool("pao-sim-bench")) return *status;
  try {
    return run_benchmarks(quick);
  } catch (const pao::Error& e) {
    std::fprintf(stderr, "pao-sim-bench: error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "pao-sim-bench: error: out of memory: an allocation failed\n");
  }
  return pao::cli::kExitBadInput;
}

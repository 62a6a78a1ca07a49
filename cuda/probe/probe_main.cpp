// pao-cuda-probe: measures a device descriptor for `pao sim --device` on any CUDA GPU in under a
// minute (issue #37): the DRAM read bandwidth as a curve of bytes in flight per SM, one SM's and
// L2's bandwidth, load latencies (pointer chases) and the decode loop's dependent iteration, the
// launch latency, the gap between dependent launches and the CTA dispatch cost (CUDA events and
// the host clock), the occupancy limits (CTAs resident at once), FMA latency and throughput, the
// tensor cores' throughput and the issue rate of the decode loop's instruction mix. Each stage
// prints what it measured as it ends; the descriptor is written at the end, every field saying
// where it came from (probe/probe_descriptor.hpp). --simulator runs it under GPGPU-Sim
// (tools/gpgpusim/run.sh): the stages that need a real device's clock or host timing are left
// out and the sizes are cut to what a simulator runs in minutes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check/cuda_device.hpp"
#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"
#include "pao/sim/model/device.hpp"
#include "probe/probe_descriptor.hpp"
#include "probe/probe_kernels.hpp"
#include "tool_start.hpp"
#include "tools/cuda_tool_mains.hpp"

namespace {

using namespace pao;
using namespace pao::cuda::probe;

const std::vector<std::string> kStages = {"clock", "occupancy", "fma",     "mma",   "issue",
                                          "dram",  "l2",        "latency", "launch"};

struct Options {
  std::string out = "probe.json";
  std::string name;
  std::string base = "h200";
  bool simulator = false;
  std::vector<std::string> skip;
};

constexpr const char* kDescription =
    "Measures a device descriptor of the CUDA GPU it runs on, for `pao sim --device FILE`, in under a\n"
    "minute. Stages (each prints what it measured when it ends):\n"
    "  clock      the SM clock: clock64 cycles of a spin kernel over its CUDA-event time\n"
    "  occupancy  the most CTAs (of 32 threads) and threads (CTAs of 1024) resident at once on one SM\n"
    "  fma        cycles between dependent FMAs of one warp; FMA throughput of an SM (fp32_tflops)\n"
    "  mma        tensor-core f16 throughput (wmma 16x16x16, fp16_tflops)\n"
    "  issue      warp instructions per cycle of the decode loop's instruction mix (issue_efficiency)\n"
    "  dram       read bandwidth by bytes in flight per SM, 1 KiB to 256 KiB (the curve; its top is\n"
    "             dram_achievable_gbps); one SM alone (sm_bandwidth_cap_gbps)\n"
    "  l2         read bandwidth of an L2-resident region (l2_bandwidth_gbps)\n"
    "  latency    pointer chases through cold lines and through L2; the decode loop's dependent\n"
    "             iteration, a block-table entry then the K line it names (iteration_latency_us)\n"
    "  launch     host launch + synchronise (launch_latency_us), back-to-back empty kernels\n"
    "             (inter_kernel_gap_us), the cost of a CTA (cta_dispatch_overhead_us)\n"
    "The driver's attributes give the SM count, the per-SM limits, L2 and the DRAM peak (memory\n"
    "clock x bus width). Every field of --out says measured (and how) or where it came from; a field\n"
    "no stage measured keeps --base's value and source, and the description lists them.\n"
    "Kernels time themselves with their SM's clock per CTA (%smid, clock64), so rates are per SM\n"
    "and summed. --simulator: for GPGPU-Sim (tools/gpgpusim/run.sh -- pao-cuda-probe --simulator):\n"
    "32-bit %clock (GPGPU-Sim has no %clock64), sizes cut to minutes of simulation, and the clock and\n"
    "launch stages left out (a simulator's events count host time), the driver's clock used instead;\n"
    "mma too (GPGPU-Sim 4.2 crashes on wmma code for sm_75).\n"
    "Exit: 0 written, 2 bad usage, 3 a CUDA error, 77 no CUDA device.";

/// The sizes of one run: a GPU's, or a simulator's (minutes of simulation on a CPU).
struct Sizes {
  std::uint64_t spin_cycles;    // occupancy: how long a CTA holds its slot
  std::int64_t dependent_fmas;  // fma: the chain
  int throughput_ctas_per_sm;   // fma / mma / issue: CTAs per SM (0: one CTA on each of `sms_used`)
  int sms_used;                 // the simulator's throughput stages run on this many SMs
  std::int64_t fma_iterations, mma_iterations, issue_iterations;
  std::size_t dram_bytes_min;   // dram: the least a point reads
  int dram_depth;               // and at least this many times its bytes in flight per SM
  int dram_points;              // how many of 1, 2, 4 ... KiB in flight per SM
  std::size_t one_sm_bytes;     // what the one CTA alone reads
  int l2_passes;                // l2: how often each CTA reads its part of the region, one launch
  std::size_t chase_bytes;      // latency: the cold region
  std::int64_t chase_steps;     // its dependent loads
  std::int64_t l2_chase_lines;  // the L2-resident chain
};

constexpr Sizes kGpuSizes{.spin_cycles = 20000,
                          .dependent_fmas = 4096,
                          .throughput_ctas_per_sm = 4,
                          .sms_used = 0,
                          .fma_iterations = 256,
                          .mma_iterations = 256,
                          .issue_iterations = 512,
                          .dram_bytes_min = std::size_t{1} << 30,
                          .dram_depth = 8,
                          .dram_points = 9,
                          .one_sm_bytes = std::size_t{256} << 20,
                          .l2_passes = 64,
                          .chase_bytes = std::size_t{256} << 20,
                          .chase_steps = 4096,
                          .l2_chase_lines = 32768};
// GPGPU-Sim runs some 100,000 thread instructions a second: the same stages on 8 SMs where a rate
// per SM is enough, and on smaller regions.
constexpr Sizes kSimulatorSizes{.spin_cycles = 2000,
                                .dependent_fmas = 1024,
                                .throughput_ctas_per_sm = 0,
                                .sms_used = 8,
                                .fma_iterations = 4,
                                .mma_iterations = 8,
                                .issue_iterations = 64,
                                .dram_bytes_min = std::size_t{2} << 20,
                                .dram_depth = 4,
                                .dram_points = 6,
                                .one_sm_bytes = std::size_t{2} << 20,
                                .l2_passes = 8,
                                .chase_bytes = std::size_t{32} << 20,
                                .chase_steps = 256,
                                .l2_chase_lines = 256};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double rate(const std::vector<CtaRecord>& records) {
  const auto spans = spans_by_sm(records);
  return device_rate_per_cycle(spans);
}
double sm_rate(const std::vector<CtaRecord>& records) {
  const auto spans = spans_by_sm(records);
  return median_sm_rate_per_cycle(spans);
}
double cycles_per_unit(const std::vector<CtaRecord>& records) {
  const CtaRecord& r = records.at(0);
  return r.work ? static_cast<double>(r.end - r.start) / static_cast<double>(r.work) : 0;
}

/// A random cycle through `lines` 128-byte lines of a region of u32 words: word 32 x line holds
/// the word index of the next line's first word.
std::vector<std::uint32_t> random_chain(std::size_t lines, std::uint32_t seed) {
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(seed));
  std::vector<std::uint32_t> words(lines * 32, 0);
  for (std::size_t i = 0; i < lines; ++i) words[order[i] * std::size_t{32}] = order[(i + 1) % lines] * 32u;
  return words;
}

class Probe {
 public:
  Probe(const Options& o, const DriverFacts& f, const sim::Device& base)
      : o_(o), f_(f), base_(base), sizes_(o.simulator ? kSimulatorSizes : kGpuSizes) {}

  Measurements run() {
    stage("clock", [&] { clock(); });
    stage("occupancy", [&] { occupancy_limits(); });
    stage("fma", [&] { fma(); });
    stage("mma", [&] { mma(); });
    stage("issue", [&] { issue(); });
    stage("dram", [&] { dram(); });
    stage("l2", [&] { l2(); });
    stage("latency", [&] { latency(); });
    stage("launch", [&] { launch(); });
    return m_;
  }

 private:
  bool wide() const { return !o_.simulator; }
  /// The clock cycles are converted with: the descriptor's own (clock_ghz_of).
  double ghz() const { return clock_ghz_of(base_, f_, m_); }
  int throughput_ctas() const {
    return sizes_.throughput_ctas_per_sm > 0 ? f_.num_sms * sizes_.throughput_ctas_per_sm : sizes_.sms_used;
  }
  double gbps(double bytes_per_cycle) const { return bytes_per_cycle * ghz(); }

  void stage(const std::string& name, const std::function<void()>& body) {
    const auto t0 = std::chrono::steady_clock::now();
    if (std::find(o_.skip.begin(), o_.skip.end(), name) != o_.skip.end()) {
      std::printf("%-10s skipped (--skip)\n", name.c_str());
      return;
    }
    if (o_.simulator && (name == "clock" || name == "launch")) {
      std::printf("%-10s skipped: a simulator's CUDA events count host time, not the device's\n",
                  name.c_str());
      return;
    }
    if (o_.simulator && name == "mma") {
      std::printf(
          "%-10s skipped: GPGPU-Sim 4.2 crashes (SIGSEGV) on the wmma kernel CUDA 13 emits for sm_75\n",
          name.c_str());
      return;
    }
    std::printf("%-10s ...\n", name.c_str());
    body();
    std::printf("%-10s done in %.1f s\n", name.c_str(), seconds_since(t0));
  }

  void clock() {
    const std::uint64_t cycles = 50'000'000;
    std::vector<double> ghz;
    for (int i = 0; i < 3; ++i) ghz.push_back(static_cast<double>(cycles) / (spin_kernel_ms(cycles) * 1e6));
    std::sort(ghz.begin(), ghz.end());
    m_.clock_ghz = ghz[1];
    std::printf("  SM clock %.3f GHz (the driver says %.3f)\n", *m_.clock_ghz, f_.clock_khz / 1e6);
  }

  void occupancy_limits() {
    const int ctas_limit = std::max(f_.max_ctas_per_sm, 1);
    const auto small = occupancy(f_.num_sms * (ctas_limit + 4), 32, sizes_.spin_cycles, wide());
    m_.peak_ctas_per_sm = peak_concurrent_ctas(small);
    const int wide_ctas = std::max(f_.max_threads_per_sm / 1024, 1);
    const auto big = occupancy(f_.num_sms * (wide_ctas + 2), 1024, sizes_.spin_cycles, wide());
    m_.peak_threads_per_sm = peak_concurrent_ctas(big) * 1024;
    std::printf("  resident at once on one SM: %d CTAs of 32 threads (driver: %d), %d threads (driver: %d)\n",
                *m_.peak_ctas_per_sm, f_.max_ctas_per_sm, *m_.peak_threads_per_sm, f_.max_threads_per_sm);
  }

  void fma() {
    m_.dependent_fma_cycles = cycles_per_unit(dependent_fmas(sizes_.dependent_fmas, wide()));
    const auto r = fma_throughput(throughput_ctas(), 1024, sizes_.fma_iterations, wide());
    m_.fma_per_cycle_per_sm = sm_rate(r) * f_.warp_size;
    std::printf("  dependent FMA: %.2f cycles; throughput %.1f lane FMAs per cycle per SM\n",
                *m_.dependent_fma_cycles, *m_.fma_per_cycle_per_sm);
  }

  void mma() {
    const auto r = mma_throughput(throughput_ctas(), 8, sizes_.mma_iterations, wide());
    m_.mma_flops_per_cycle_per_sm = sm_rate(r);
    std::printf("  tensor cores: %.0f f16 flops per cycle per SM\n", *m_.mma_flops_per_cycle_per_sm);
  }

  void issue() {
    const auto r = issue_mix(throughput_ctas(), 512, sizes_.issue_iterations, wide());
    m_.issue_mix_ipc_per_sm = sm_rate(r);
    std::printf("  decode-loop mix: %.2f warp instructions per cycle per SM\n", *m_.issue_mix_ipc_per_sm);
  }

  /// One point: `ctas_per_sm` x `threads` threads, `unroll` 16-byte loads each in flight.
  BandwidthPoint read_point(const DeviceBytes& buffer, std::size_t& offset, int ctas_per_sm, int threads,
                            int unroll) {
    const int ctas = f_.num_sms * ctas_per_sm;
    const double in_flight = static_cast<double>(ctas_per_sm) * threads * 16 * unroll;
    const std::size_t chunk = static_cast<std::size_t>(threads) * 16 * unroll;
    const std::size_t total = std::max<std::size_t>(
        sizes_.dram_bytes_min, static_cast<std::size_t>(sizes_.dram_depth * in_flight) * f_.num_sms);
    const std::size_t per_cta = std::max<std::size_t>(chunk, total / ctas / chunk * chunk);
    if (offset + per_cta * ctas > buffer.size()) offset = 0;  // a GPU reads the one big buffer again
    const auto r = stream_read(buffer, offset, per_cta, ctas, threads, unroll, 1, wide());
    if (o_.simulator) offset += per_cta * ctas;  // a simulator reads fresh (cold) lines each time
    return {in_flight, gbps(rate(r))};
  }

  void dram() {
    // 1 KiB ... 256 KiB in flight per SM: (CTAs per SM, threads, loads in flight per thread).
    const int shapes[][3] = {{1, 64, 1},  {1, 128, 1}, {1, 256, 1}, {1, 256, 2}, {1, 256, 4},
                             {1, 256, 8}, {2, 256, 8}, {4, 256, 8}, {8, 256, 8}};
    std::size_t bytes = sizes_.dram_bytes_min;
    if (o_.simulator) {  // every point on lines never read before
      bytes = 0;
      for (int i = 0; i < sizes_.dram_points; ++i) {
        const double in_flight = static_cast<double>(shapes[i][0]) * shapes[i][1] * 16 * shapes[i][2];
        bytes += std::max<std::size_t>(sizes_.dram_bytes_min,
                                       static_cast<std::size_t>(sizes_.dram_depth * in_flight) * f_.num_sms);
      }
    }
    DeviceBytes buffer(bytes + sizes_.one_sm_bytes);
    std::size_t offset = 0;
    for (int i = 0; i < sizes_.dram_points; ++i) {
      m_.dram_curve.push_back(read_point(buffer, offset, shapes[i][0], shapes[i][1], shapes[i][2]));
      std::printf("  %s\n", describe_curve({m_.dram_curve.back()}).c_str());
    }
    const auto one = stream_read(buffer, bytes, sizes_.one_sm_bytes, 1, 1024, 8, 1, wide());
    m_.one_sm_gbps = gbps(rate(one));
    std::printf("  one SM alone: %.0f GB/s\n", *m_.one_sm_gbps);
  }

  void l2() {
    const std::size_t region = static_cast<std::size_t>(f_.l2_size_bytes) / 4;
    const int ctas = f_.num_sms * 4, threads = 256, unroll = 2;  // 32 KiB in flight per SM
    const std::size_t chunk = static_cast<std::size_t>(threads) * 16 * unroll;
    const std::size_t per_cta = std::max(chunk, region / ctas / chunk * chunk);
    DeviceBytes buffer(per_cta * ctas);
    stream_read(buffer, 0, per_cta, ctas, threads, unroll, 1, wide());  // brings the region into L2
    m_.l2_gbps = gbps(rate(stream_read(buffer, 0, per_cta, ctas, threads, unroll, sizes_.l2_passes, wide())));
    std::printf("  L2-resident region of %zu KiB, read %d times: %.0f GB/s\n", per_cta * ctas / 1024,
                sizes_.l2_passes, *m_.l2_gbps);
  }

  void latency() {
    {
      const std::size_t lines = sizes_.chase_bytes / 128;
      const auto words = random_chain(lines, 1);
      DeviceBytes chain(words.size() * 4);
      chain.upload(words.data(), words.size() * 4);
      m_.dram_latency_cycles = cycles_per_unit(pointer_chase(chain, sizes_.chase_steps, wide()));
    }
    {
      const auto words = random_chain(static_cast<std::size_t>(sizes_.l2_chase_lines), 2);
      DeviceBytes chain(words.size() * 4);
      chain.upload(words.data(), words.size() * 4);
      pointer_chase(chain, sizes_.l2_chase_lines, wide());  // every line of the cycle into L2
      m_.l2_latency_cycles = cycles_per_unit(pointer_chase(chain, sizes_.l2_chase_lines, wide()));
    }
    {
      // table[s] = the word index of step s's line; that line's first word = s + 1.
      const std::size_t lines = sizes_.chase_bytes / 128;
      const auto steps = static_cast<std::size_t>(sizes_.chase_steps);
      std::vector<std::uint32_t> pick(lines);
      std::iota(pick.begin(), pick.end(), 0u);
      std::shuffle(pick.begin(), pick.end(), std::mt19937(3));
      std::vector<std::uint32_t> table(steps + 1), words(lines * 32, 0);
      for (std::size_t s = 0; s <= steps; ++s) {
        table[s] = pick[s % lines];
        words[std::size_t{table[s]} * 32] = static_cast<std::uint32_t>(s + 1);
      }
      DeviceBytes t(table.size() * 4), l(words.size() * 4);
      t.upload(table.data(), table.size() * 4);
      l.upload(words.data(), words.size() * 4);
      m_.iteration_cycles = cycles_per_unit(table_then_line(t, l, sizes_.chase_steps, wide()));
    }
    std::printf(
        "  load latency: %.0f cycles from DRAM, %.0f from L2; table entry then K line: %.0f cycles (%.3f "
        "us)\n",
        *m_.dram_latency_cycles, *m_.l2_latency_cycles, *m_.iteration_cycles,
        *m_.iteration_cycles / ghz() / 1e3);
  }

  void launch() {
    m_.launch_and_sync_us = launch_and_sync_us(200);
    const int launches = 2000;
    m_.kernel_gap_us = empty_kernels_ms(launches, 1, 32) * 1e3 / launches;
    const int per_sm = 64, reps = 200;
    const double one = empty_kernels_ms(reps, f_.num_sms, 128) * 1e3 / reps;
    const double many = empty_kernels_ms(reps, f_.num_sms * per_sm, 128) * 1e3 / reps;
    m_.cta_dispatch_us = std::max(0.0, (many - one) / (per_sm - 1));
    std::printf(
        "  launch + synchronise %.2f us; back-to-back empty kernels %.2f us each; %.3f us per CTA per SM\n",
        *m_.launch_and_sync_us, *m_.kernel_gap_us, *m_.cta_dispatch_us);
  }

  const Options& o_;
  const DriverFacts& f_;
  const sim::Device& base_;
  Sizes sizes_;
  Measurements m_;
};

std::string default_name(const std::string& device_name) {
  std::string n;
  for (const char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!n.empty() && n.back() != '-')
      n += '-';
  }
  while (!n.empty() && n.back() == '-') n.pop_back();
  return (n.empty() ? std::string("cuda-device") : n) + "-probed";
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace

int pao_cuda_probe_main(int argc, char** argv) {
  cli::line_buffered_output();
  if (const auto exit = cli::start_tool("pao-cuda-probe")) return *exit;
  Options o;
  CLI::App app(kDescription, "pao-cuda-probe");
  app.add_option("--out", o.out, "the descriptor JSON to write")->capture_default_str();
  app.add_option("--name", o.name,
                 "the descriptor's name (default: the device's name, e.g. nvidia-h200-probed)");
  app.add_option("--base", o.base,
                 "a descriptor (data/devices name or path) for the fields no stage measures (the host\n"
                 "cost of a framework op; those of skipped stages)")
      ->capture_default_str();
  app.add_flag("--simulator", o.simulator, "running under GPGPU-Sim: see above");
  app.add_option("--skip", o.skip, "stages to leave out, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(kStages));
  if (const auto exit = cli::parse_command_line(app, argc, argv)) return *exit;

  std::string command = "pao-cuda-probe";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  sim::Device base;
  try {
    require_writable_file_path("--out", o.out);
    base = sim::load_device(o.base);
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-probe: error: %s\n", shortened_message(e.what()).c_str());
    return cli::kExitBadInput;
  }
  std::string why;
  if (!cuda::check::cuda_device_available(why)) {
    std::printf("pao-cuda-probe: SKIPPED, no usable CUDA device (%s): nothing was measured\n", why.c_str());
    return cli::kExitNoDevice;
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const DriverFacts facts = query_driver();
    std::printf("pao-cuda-probe: %s, compute capability %d.%d, %d SMs, L2 %d KiB%s\n", facts.name.c_str(),
                facts.cc_major, facts.cc_minor, facts.num_sms, facts.l2_size_bytes / 1024,
                o.simulator ? " (under a simulator)" : "");
    const Measurements m = Probe(o, facts, base).run();
    const sim::Device d = probe_descriptor(base, facts, m, o.name.empty() ? default_name(facts.name) : o.name,
                                           command, today());
    const std::string json = sim::device_to_json(d);
    write_file_atomically(o.out, std::as_bytes(std::span(json.data(), json.size())));
    std::printf("pao-cuda-probe: wrote %s in %.1f s (pao sim run --device %s ...)\n", o.out.c_str(),
                seconds_since(t0), o.out.c_str());
  } catch (const cuda::check::CudaError& e) {
    std::printf("pao-cuda-probe: CUDA error, stopping (nothing written): %s\n", e.what());
    return cli::kExitCudaError;
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-probe: error: %s\n", shortened_message(e.what()).c_str());
    return cli::kExitBadInput;
  }
  return cli::kExitOk;
}

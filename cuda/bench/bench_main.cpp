// pao-cuda-bench: times the CUDA kernels on cases — decode V1 and V2 (partition 256 / 512 / 1024,
// attention plus reduce) and prefix — and writes the measurement CSV that `pao sim calibrate` and
// `pao sim validate` read (sim/include/pao/sim/studies/calibrate.hpp; columns in docs/cuda.md).
// The cases come from the case model (data/cases/cuda-bench.json by default), as every pao tool's
// do; long contexts use the `constant` value distribution, which fills the tensors without drawing. Two
// timings: CUDA events around each launch after warm-up and an L2 flush ("gpu"), or vLLM's benchmark manner —
// launches back to back between two synchronisations, wall time / launches
// ("loop"). Prints achieved bandwidth as a fraction of the device's peak (memory clock x bus
// width), a ratio measured in the same run; it never passes or fails on absolute time.
#include <cuda_runtime_api.h>
#include <fnmatch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_kernels.hpp"
#include "bench/measurement_csv.hpp"
#include "check/gpu_run.hpp"
#include "cli_parse.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"

namespace {

using namespace pao;
using namespace pao::cuda;

struct Options {
  std::string suite = "cuda-bench";
  bool full = false;
  std::vector<std::string> case_files;
  std::string kernels = "v1,v2:256,v2:512,v2:1024,prefix";
  std::string timing = "gpu";
  int warmup = 3, repeats = 20, loop_launches = 100;
  bool flush = true;
  double max_gib = 24;
  std::string out = "pao-cuda-bench.csv";
  std::string cases_glob;
  bool list = false;
  bool csv = false;
};

constexpr const char* kDescription =
    "Times pao's CUDA kernels on cases and writes the measurement CSV of `pao sim calibrate` / `pao sim\n"
    "validate`. Each decode case runs V1 and V2 at the partition sizes --kernels lists, each prefix case\n"
    "the prefix kernel with its own tiles. Every sequence of a case must have the same length (a CSV row\n"
    "has one seq_len). Timing gpu: CUDA events around one launch (V2: attention + reduce), after the\n"
    "warm-up and an L2 flush, median of the repeats; loop: vLLM's benchmark_paged_attention.py, the\n"
    "launches back to back between two synchronisations, wall time / launches.\n"
    "Exit: 0 measured, 2 bad usage or input, 3 a CUDA error, 77 no CUDA device.";

struct Device {
  std::string name;
  double peak_gbps = 0;
  std::size_t l2_bytes = 0;
};

Device describe_device() {
  Device d;
  int dev = 0, clock_khz = 0, bus_bits = 0, l2 = 0;
  cudaDeviceProp prop{};
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  d.name = prop.name;
  d.peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
  d.l2_bytes = static_cast<std::size_t>(l2);
  return d;
}

struct Measured {
  double time_us = 0, stddev_us = 0;
  int repeats = 0;
};

void cuda_check(cudaError_t e, const char* what) { check::throw_if_cuda_error(static_cast<int>(e), what); }

/// A buffer the size of twice the L2, written before each timed launch so that none of the
/// previous launch's K/V is still in L2.
class L2Flush {
 public:
  explicit L2Flush(std::size_t bytes) : bytes_(bytes) {
    cuda_check(cudaMalloc(&ptr_, bytes_), "cudaMalloc (L2 flush)");
  }
  ~L2Flush() { cudaFree(ptr_); }
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void run(int value) const { cuda_check(cudaMemsetAsync(ptr_, value, bytes_), "L2 flush"); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

/// Times `launch` as --timing says. Throws pao::Error with the launcher's message when it refuses
/// the call, CudaError on a CUDA error.
Measured time_launches(const std::function<Status()>& launch, const Options& o, const L2Flush* flush) {
  const auto launch_or_throw = [&] {
    if (Status s = launch(); !s.ok()) fail(s.message());
  };
  for (int i = 0; i < o.warmup; ++i) launch_or_throw();
  cuda_check(cudaDeviceSynchronize(), "warm-up");
  Measured m;
  if (o.timing == "loop") {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.loop_launches; ++i) launch_or_throw();
    cuda_check(cudaDeviceSynchronize(), "timed launches");
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    m.time_us = us / o.loop_launches;
    m.repeats = o.loop_launches;
    return m;
  }
  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> us;
  for (int r = 0; r < o.repeats; ++r) {
    if (flush) flush->run(r & 0xff);
    cuda_check(cudaEventRecord(start), "cudaEventRecord");
    launch_or_throw();
    cuda_check(cudaEventRecord(stop), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "timed launch");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    us.push_back(1e3 * ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(us.begin(), us.end());
  m.time_us = us[us.size() / 2];
  double mean = 0, var = 0;
  for (double u : us) mean += u / static_cast<double>(us.size());
  for (double u : us) var += (u - mean) * (u - mean) / static_cast<double>(us.size());
  m.stddev_us = std::sqrt(var);
  m.repeats = o.repeats;
  return m;
}

/// The row of one measurement of case `c` with `kernel`.
bench::MeasurementRow row_of(const cases::Case& c, const BenchKernel& kernel, const Measured& t, double bytes,
                             const Device& dev, const Options& o) {
  bench::MeasurementRow row;
  row.device = dev.name;
  row.prefix = kernel.variant == KernelVariant::prefix;
  // `c` is the case as the kernel runs it (case_for_kernel): V2's partition size is the case's.
  row.partition_size = kernel.variant == KernelVariant::v2 ? c.partition_size : 0;
  row.block_m = c.block_m, row.block_n = c.block_n;
  row.query_len = c.query_lens.empty() ? 1 : c.query_lens.front();
  static_cast<LaunchShape&>(row) = c;
  row.dtype = c.dtype;
  row.kv_cache_dtype = c.cache_storage_dtype();
  row.seq_len = c.seq_lens.front();
  row.max_seq_len = c.max_seq_len;
  row.time_us = t.time_us, row.stddev_us = t.stddev_us, row.repeats = t.repeats;
  row.timing = o.timing;
  row.pool_blocks = o.timing == "loop" ? cases::pool_num_blocks(c) : 0;
  row.achieved_gbps = t.time_us > 0 ? bytes / t.time_us / 1e3 : 0;
  row.note = c.id;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(kDescription, "pao-cuda-bench");
  auto* suite = app.add_option("--suite", o.suite, "a suite of data/cases, or a suite .json path")
                    ->capture_default_str();
  app.add_flag("--full", o.full, "the suite's full product instead of its pairwise cover");
  auto* cases_opt =
      app.add_option("--case", o.case_files, "a case JSON (docs/golden.md) instead of a suite; repeatable");
  suite->excludes(cases_opt);
  app.add_option(
         "--kernels", o.kernels,
         "what to time, comma-separated: v1, v2 (the case's partition_size), v2:N, prefix; each case\n"
         "runs those of its kind")
      ->capture_default_str();
  app.add_option("--timing", o.timing, "gpu (CUDA events around one launch) or loop (vLLM's manner)")
      ->check(CLI::IsMember({"gpu", "loop"}))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "launches before timing")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--repeats", o.repeats, "gpu timing: timed launches (the median is kept)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--loop-launches", o.loop_launches, "loop timing: launches between the two synchronisations")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_flag("!--no-l2-flush", o.flush, "gpu timing: do not flush L2 before each timed launch");
  app.add_option("--max-gib", o.max_gib, "skip cases whose device buffers exceed this many GiB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--out", o.out, "the measurement CSV to write")->capture_default_str();
  app.add_option("--cases", o.cases_glob,
                 "only the cases whose id matches this shell glob (\"decode-*-bf16-*\")");
  app.add_flag("--list", o.list, "print the cases and the kernels each runs, then exit (no GPU needed)");
  app.add_flag(
      "--csv", o.csv,
      "with --list: write to --out the measurement rows the run would write, without times, and\n"
      "the --kernels entry of each (column bench_kernel): what tools/gpgpusim/time_grid.py runs one\n"
      "by one");
  if (const auto exit = cli::parse_command_line(app, argc, argv)) return *exit;

  std::vector<cases::Case> cases;
  std::vector<BenchKernel> kernels;
  try {
    kernels = parse_bench_kernels(o.kernels);
    if (o.case_files.empty())
      cases = cases::expand_suite(cases::find_suite(o.suite, cases::cases_dir()), o.full);
    for (const auto& f : o.case_files) cases.push_back(cases::load_case_file(f));
    for (const auto& c : cases) require_bench_case(c);
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-bench: error: %s\n", e.what());
    return cli::kExitBadInput;
  }
  if (!o.cases_glob.empty()) {
    std::erase_if(cases,
                  [&](const cases::Case& c) { return fnmatch(o.cases_glob.c_str(), c.id.c_str(), 0) != 0; });
    if (cases.empty()) {
      std::fprintf(stderr, "pao-cuda-bench: error: --cases '%s' matches no case\n", o.cases_glob.c_str());
      return cli::kExitBadInput;
    }
  }
  if (o.list && o.csv) {
    std::ofstream out(o.out, std::ios::binary);
    out << bench::measurement_csv_header() << ",bench_kernel\n";
    for (const auto& c : cases)
      for (const auto& k : kernels_of_case(kernels, c))
        out << bench::measurement_csv_row(row_of(case_for_kernel(c, k), k, {}, 0, {}, o)) << "," << k.label
            << "\n";
    if (!out) {
      std::fprintf(stderr, "pao-cuda-bench: error: cannot write %s\n", o.out.c_str());
      return cli::kExitBadInput;
    }
    std::printf("wrote %s\n", o.out.c_str());
    return cli::kExitOk;
  }
  if (o.list) {
    for (const auto& c : cases) {
      std::printf("%s: %s; kernels", c.id.c_str(), cases::describe(c).c_str());
      for (const auto& k : kernels_of_case(kernels, c)) std::printf(" %s", k.label.c_str());
      std::printf("; %.2f GiB on the device\n", bench_case_gib(c));
    }
    return cli::kExitOk;
  }
  std::string why;
  if (!check::cuda_device_available(why)) {
    std::printf("pao-cuda-bench: SKIPPED, no usable CUDA device (%s): nothing was measured\n", why.c_str());
    return cli::kExitNoDevice;
  }
  try {
    const Device dev = describe_device();
    std::printf(
        "pao-cuda-bench: %s, peak HBM %.0f GB/s (memory clock x bus width), L2 %zu MiB; %zu case(s)\n",
        dev.name.c_str(), dev.peak_gbps, dev.l2_bytes >> 20, cases.size());
    const std::unique_ptr<L2Flush> flush =
        o.flush && o.timing == "gpu"
            ? std::make_unique<L2Flush>(std::max<std::size_t>(2 * dev.l2_bytes, std::size_t{64} << 20))
            : nullptr;
    std::ostringstream csv;
    csv << "# pao-cuda-bench on " << dev.name << "; peak HBM " << dev.peak_gbps << " GB/s; timing "
        << o.timing
        << (o.timing == "gpu" ? "; time_us = median of " + std::to_string(o.repeats) +
                                    " CUDA-event timings after " + std::to_string(o.warmup) +
                                    " warm-up launches" + (o.flush ? ", L2 flushed before each" : "")
                              : "; time_us = wall time of " + std::to_string(o.loop_launches) +
                                    " back-to-back launches / " + std::to_string(o.loop_launches))
        << "\n";
    csv << bench::measurement_csv_header() << "\n";
    std::printf("%-58s %-8s %10s %8s %7s\n", "case", "kernel", "time_us", "GB/s", "of peak");
    for (const auto& c : cases) {
      if (bench_case_gib(c) > o.max_gib) {
        std::printf("skipped %s: %.1f GiB on the device > --max-gib %.1f\n", c.id.c_str(), bench_case_gib(c),
                    o.max_gib);
        continue;
      }
      for (const BenchKernel& k : kernels_of_case(kernels, c)) {
        const cases::Case kc = case_for_kernel(c, k);
        Measured t;
        double bytes = 0;
        try {
          if (k.variant == KernelVariant::prefix) {
            const cases::PrefixCase pc = cases::make_prefix_case(kc);
            const check::DevicePrefixCase device(pc, pc.args().options);
            t = time_launches([&] { return device.launch(); }, o, flush.get());
            bytes = prefix_bytes_moved(kc);
          } else {
            const cases::DecodeCase dc = cases::make_decode_case(kc);
            const check::DeviceDecodeCase device(k.variant, dc, dc.args().options);
            t = time_launches([&] { return device.launch(); }, o, flush.get());
            bytes = decode_bytes_moved(kc, device.plan());
          }
        } catch (const check::CudaError&) {
          throw;
        } catch (const Error& e) {
          std::printf("skipped %s %s: %s\n", c.id.c_str(), k.label.c_str(), e.what());
          continue;
        }
        const bench::MeasurementRow row = row_of(kc, k, t, bytes, dev, o);
        csv << bench::measurement_csv_row(row) << "\n";
        std::printf("%-58s %-8s %10.2f %8.0f %6.1f%%\n", c.id.c_str(), k.label.c_str(), t.time_us,
                    row.achieved_gbps, 100 * row.achieved_gbps / dev.peak_gbps);
      }
    }
    std::ofstream out(o.out, std::ios::binary);
    out << csv.str();
    if (!out) {
      std::fprintf(stderr, "pao-cuda-bench: error: cannot write %s\n", o.out.c_str());
      return cli::kExitBadInput;
    }
    std::printf("wrote %s\n", o.out.c_str());
  } catch (const check::CudaError& e) {
    std::printf("pao-cuda-bench: CUDA error, stopping: %s\n", e.what());
    return cli::kExitCudaError;
  }
  return cli::kExitOk;
}

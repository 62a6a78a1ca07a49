// pao-cuda-bench: times the CUDA kernels on cases — decode V1 and V2 (partition 256 / 512 / 1024,
// attention plus reduce) and prefix — and writes the measurement CSV that `pao sim calibrate` and
// `pao sim validate` read (sim/include/pao/sim/studies/calibrate.hpp; columns in docs/cuda.md).
// The cases come from the case model (data/cases/cuda-bench.json by default), as every pao tool's
// do; long contexts use the `constant` value distribution, which fills the tensors without drawing. Two
// timings: CUDA events around each launch after warm-up and an L2 flush ("gpu"), or vLLM's benchmark manner —
// launches back to back between two synchronisations, wall time / launches
// ("loop"). Prints achieved bandwidth as a fraction of the device's peak (memory clock x bus
// width), a ratio measured in the same run; it never passes or fails on absolute time.
// A lent GPU's minutes count: each case is built and put on the device once for all its kernels
// (filled there when the distribution allows: bench/filled_case.hpp), and the row loop
// (bench/bench_run.hpp) appends each row to the CSV as it is measured, resumes, and keeps a budget.
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
#include "bench/bench_run.hpp"
#include "bench/filled_case.hpp"
#include "bench/measurement_csv.hpp"
#include "check/gpu_run.hpp"
#include "check/run_progress.hpp"
#include "cli_parse.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "tool_start.hpp"
#include "tools/cuda_tool_mains.hpp"

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
  bool resume = false;
  double budget_s = 0;
};

constexpr const char* kDescription =
    "Times pao's CUDA kernels on cases and writes the measurement CSV of `pao sim calibrate` / `pao sim\n"
    "validate`. Each decode case runs V1 and V2 at the partition sizes --kernels lists, each prefix case\n"
    "the prefix kernel with its own tiles. Every sequence of a case must have the same length (a CSV row\n"
    "has one seq_len). Timing gpu: CUDA events around one launch (V2: attention + reduce), after the\n"
    "warm-up and an L2 flush, median of the repeats; loop: vLLM's benchmark_paged_attention.py, the\n"
    "launches back to back between two synchronisations, wall time / launches.\n"
    "Each case is built once for all its kernels; a constant-distribution case is filled on the device\n"
    "(no host tensor). Each row is appended to --out and flushed as soon as it is measured, with a\n"
    "progress line and an ETA on stderr; --resume skips the rows --out holds.\n"
    "Exit: 0 measured (a run --budget-s stopped says how many rows it left), 2 bad usage or input,\n"
    "3 a CUDA error, 77 no CUDA device.";

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

/// The cases on the GPU: each built once (filled on the device when its distribution allows) and
/// every kernel of --kernels timed on the same buffers.
class GpuBench : public bench::BenchDevice {
 public:
  GpuBench(const Options& o, const L2Flush* flush) : o_(o), flush_(flush) {}

  void prepare(const cases::Case& c) override {
    release();
    const bool filled = bench::fills_on_device(c);
    if (c.kernel == cases::CaseKernel::prefix) {
      if (filled) {
        const bench::FilledPrefixCase pc = bench::make_filled_prefix_case(c);
        prefix_ = std::make_unique<check::DevicePrefixCase>(pc, pc.options());
      } else {
        const cases::PrefixCase pc = cases::make_prefix_case(c);
        prefix_ = std::make_unique<check::DevicePrefixCase>(pc, pc.args().options);
      }
      return;
    }
    // Planned as V2 with the case's partition size; measure() plans each kernel on the same inputs.
    if (filled) {
      const bench::FilledDecodeCase dc = bench::make_filled_decode_case(c);
      decode_ = std::make_unique<check::DeviceDecodeCase>(KernelVariant::v2, dc, dc.options());
    } else {
      const cases::DecodeCase dc = cases::make_decode_case(c);
      decode_ = std::make_unique<check::DeviceDecodeCase>(KernelVariant::v2, dc, dc.args().options);
    }
  }

  bench::BenchTiming measure(const cases::Case& kc, const BenchKernel& k) override {
    bench::BenchTiming t;
    Measured m;
    if (k.variant == KernelVariant::prefix) {
      require(prefix_ != nullptr, "case ", kc.id, ": not a prefix case");
      m = time_launches([&] { return prefix_->launch(); }, o_, flush_);
      t.bytes = prefix_bytes_moved(kc);
    } else {
      require(decode_ != nullptr, "case ", kc.id, ": not a decode case");
      decode_->select(k.variant, kc.partition_size);
      m = time_launches([&] { return decode_->launch(); }, o_, flush_);
      t.bytes = decode_bytes_moved(kc, decode_->plan());
    }
    t.time_us = m.time_us, t.stddev_us = m.stddev_us, t.repeats = m.repeats;
    return t;
  }

  void release() override {
    decode_.reset();
    prefix_.reset();
  }

  bool fatal(const Error& e) const override { return dynamic_cast<const check::CudaError*>(&e) != nullptr; }

 private:
  const Options& o_;
  const L2Flush* flush_;
  std::unique_ptr<check::DeviceDecodeCase> decode_;
  std::unique_ptr<check::DevicePrefixCase> prefix_;
};

/// The comment line of a new CSV: the device and how time_us was measured.
std::string csv_comment(const Device& dev, const Options& o) {
  std::ostringstream os;
  os << "pao-cuda-bench on " << dev.name << "; peak HBM " << dev.peak_gbps << " GB/s; timing " << o.timing;
  if (o.timing == "gpu") {
    os << "; time_us = median of " << o.repeats << " CUDA-event timings after " << o.warmup
       << " warm-up launches";
    if (o.flush) os << ", L2 flushed before each";
  } else {
    os << "; time_us = wall time of " << o.loop_launches << " back-to-back launches / " << o.loop_launches;
  }
  return os.str();
}

bench::BenchRunOptions run_options(const Options& o, const Device& dev) {
  bench::BenchRunOptions r;
  r.device_name = dev.name;
  r.peak_gbps = dev.peak_gbps;
  r.timing = o.timing;
  r.max_gib = o.max_gib;
  return r;
}

}  // namespace

int pao_cuda_bench_main(int argc, char** argv) {
  cli::line_buffered_output();
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
  app.add_option("--out", o.out,
                 "the measurement CSV, each row appended and flushed as it is measured (started anew\n"
                 "unless --resume)")
      ->capture_default_str();
  app.add_flag("--resume", o.resume,
               "keep the rows --out holds and skip them (a row is identified by every column but\n"
               "time_us, stddev_us, repeats and achieved_gbps); measure the rest");
  app.add_option("--budget-s", o.budget_s,
                 "stop between rows when the next one would end past this many seconds of wall time\n"
                 "(estimated from the rows so far), exit 0 saying how many rows are left; 0: no budget")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
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
    bench::BenchRunOptions list_options;
    list_options.timing = o.timing;
    std::ofstream out(o.out, std::ios::binary);
    out << bench::measurement_csv_header() << ",bench_kernel\n";
    for (const auto& c : cases)
      for (const auto& k : kernels_of_case(kernels, c))
        out << bench::measurement_csv_row(bench::bench_row(case_for_kernel(c, k), k, {}, list_options)) << ","
            << k.label << "\n";
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
    bench::MeasurementCsvFile csv(o.out, o.resume, csv_comment(dev, o));
    std::printf("%-58s %-8s %10s %8s %7s\n", "case", "kernel", "time_us", "GB/s", "of peak");
    GpuBench gpu(o, flush.get());
    const tools::BudgetClock clock(o.budget_s);
    const bench::BenchRunSummary sum =
        bench::run_bench(cases, kernels, run_options(o, dev), csv, gpu, clock, stdout, stderr);
    std::printf(
        "%s: %zu row(s) appended to %s (%zu there already, %zu skipped, %zu left); %zu case build(s)\n",
        "pao-cuda-bench", sum.measured, o.out.c_str(), sum.resumed, sum.refused, sum.left, sum.builds);
  } catch (const check::CudaError& e) {
    std::printf("pao-cuda-bench: CUDA error, stopping: %s\n", e.what());
    return cli::kExitCudaError;
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-bench: error: %s\n", e.what());
    return cli::kExitBadInput;
  }
  return cli::kExitOk;
}

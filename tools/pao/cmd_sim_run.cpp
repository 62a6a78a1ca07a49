// `pao sim run`: time one workload with one kernel choice; table, --json, --trace.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <streambuf>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"
#include "pao/sim/engine/chrome_trace.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/engine/report.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "sim_options.hpp"

namespace pao::cli::sim_commands {
using Action = std::function<int()>;

namespace {

struct RunOptions {
  sim::DeviceOptions device;
  sim::WorkloadOptions workload;
  sim::KernelOptions kernel_options;
  std::string kernel = "v1";
  bool json = false;
  std::string trace_file;
  std::int64_t trace_max_ctas = 1000000;
  std::string memory_limit;
};

/// An ostream's bytes into a ByteSink (the trace writer writes to an ostream; the file is written
/// atomically).
class SinkBuffer final : public std::streambuf {
 public:
  explicit SinkBuffer(ByteSink& sink) : sink_(sink) { setp(buffer_, buffer_ + sizeof buffer_); }

 protected:
  int_type overflow(int_type ch) override {
    drain();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    drain();
    return 0;
  }

 private:
  void drain() {
    sink_.write(std::string_view(pbase(), static_cast<std::size_t>(pptr() - pbase())));
    setp(buffer_, buffer_ + sizeof buffer_);
  }

  ByteSink& sink_;
  char buffer_[1 << 16];
};

/// The inputs --trace may not be written over: the descriptor, the case and, when the case is a
/// golden inside a golden folder (its manifest beside it), that folder.
std::vector<InputPath> run_inputs(const RunOptions& o) {
  namespace fs = std::filesystem;
  std::vector<InputPath> inputs{{"--device", o.device.device}, {"--case", o.workload.case_file}};
  if (o.workload.has_case() && fs::path(o.workload.case_file).extension() != ".json") {
    fs::path folder = fs::path(o.workload.case_file).lexically_normal();
    if (!folder.has_filename()) folder = folder.parent_path();
    folder = folder.parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ec;
    bool golden_folder = fs::exists(folder / "manifest.json", ec);
    for (const auto& entry : fs::directory_iterator(folder, ec))
      golden_folder = golden_folder || entry.path().filename().string().rfind("manifest-shard-", 0) == 0;
    if (golden_folder) inputs.push_back({"the golden folder of --case", folder});
  }
  return inputs;
}

int execute(const RunOptions& o) {
  // No output over an input, and a trace path that can be written, before anything is simulated.
  const auto inputs = run_inputs(o);
  check_file_outputs({{"--trace", o.trace_file}}, inputs);
  set_memory_limit(o.memory_limit);
  const sim::Device device = o.device.load();
  const cases::Case c = o.workload.to_case();
  const sim::Workload workload = sim::workload_of(c);
  const sim::KernelConfig kernel =
      sim::parse_kernel_spec(o.kernel, o.kernel_options.defaults(o.workload.has_case() ? &c : nullptr));
  // A long run says so before it starts (10^8 CTAs take about two minutes on one core).
  if (const double ctas = sim::estimated_ctas(workload, kernel); ctas > 1e7)
    std::fprintf(stderr,
                 "pao sim run: %.3g CTAs to build and schedule: this takes a while (about a minute per "
                 "5e7 CTAs)\n",
                 ctas);
  const auto launches = sim::build_launches(device, workload, kernel);

  sim::SimResult result;
  if (!o.trace_file.empty()) {
    // Written atomically (a temporary beside it, renamed into place): an interrupted run leaves no
    // half-written trace, and never overwrites another file.
    std::vector<std::string> names;
    std::int64_t slices = 0;
    for (const auto& l : launches) {
      names.push_back(l.name);
      slices += static_cast<std::int64_t>(l.ctas.size());
    }
    std::int64_t dropped = 0;
    write_file_atomically(o.trace_file, [&](ByteSink& sink) {
      SinkBuffer buffer(sink);
      std::ostream out(&buffer);
      sim::ChromeTraceWriter writer(out, names, o.trace_max_ctas);
      // Measured on the first 20000 slices, extrapolated to all that are kept: a warning while there
      // is still time to stop a trace of hundreds of MB. The counter events per slice grow as the SMs
      // drift apart, so the extrapolation is low on long grids (V2, 525312 slices: 166 MB said, 260.3
      // MB written; the fallback, 10^6 slices: 530 MB said, 554.6 MB written): "or more".
      const long long kept = static_cast<long long>(std::min(slices, o.trace_max_ctas));
      writer.estimate_size(20000, slices, [kept](double bytes) {
        if (bytes > 100e6)
          std::fprintf(stderr,
                       "warning: --trace will write %.0f MB or more (%lld CTA slices; extrapolated from the "
                       "first 20000); --trace-max-ctas N keeps the first N\n",
                       bytes / 1e6, kept);
      });
      result = sim::simulate(device, launches, &writer);
      writer.finish();
      out.flush();
      require(static_cast<bool>(out), "--trace ", o.trace_file, ": write failed");
      dropped = writer.dropped_cta_slices();
    });
    if (dropped > 0)
      std::fprintf(
          stderr,
          "note: the trace keeps the first %lld CTA slices; %lld more were dropped (--trace-max-ctas)\n",
          static_cast<long long>(o.trace_max_ctas), static_cast<long long>(dropped));
  } else {
    result = sim::simulate(device, launches);
  }

  if (o.json) {
    std::cout << sim::result_to_json(result, device, workload, kernel).dump(2) << "\n";
  } else {
    std::printf("device   %s\n", sim::device_summary(device).c_str());
    std::printf("kernel   %s\nworkload %s\n\n", kernel.label().c_str(), workload.to_string().c_str());
    std::fputs(sim::format_result(result, device).c_str(), stdout);
    if (!o.trace_file.empty())
      std::printf("trace    %s (%.1f MB; open in https://ui.perfetto.dev)\n", o.trace_file.c_str(),
                  static_cast<double>(std::filesystem::file_size(o.trace_file)) / 1e6);
  }
  return result.ok ? 0 : 1;
}

}  // namespace

void add_run(CLI::App& sim, Action& action) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = sim.add_subcommand("run",
                                     "time one workload with one kernel: per-kernel time, CTAs, occupancy, "
                                     "waves, bandwidth, SM utilisation");
  opts->device.add_to(*cmd);
  cmd->add_option("--kernel,-k", opts->kernel,
                  "v1 | v2[:PARTITION] | prefix[:BLOCK_MxBLOCK_N] | fallback[:TILE], each with an optional "
                  "@IMPLEMENTATION (@pao-cuda: pao's own CUDA kernels; see --implementation)")
      ->capture_default_str();
  opts->kernel_options.add_to(*cmd);
  opts->workload.add_to(*cmd);
  cmd->add_flag("--json", opts->json,
                "print JSON: top-level time_us and kernels [{name, time_us, ctas, waves, ...}]");
  cmd->add_option("--trace", opts->trace_file,
                  "write a Chrome/Perfetto trace (one track group per SM, a slice per CTA, counters)");
  cmd->add_option("--trace-max-ctas", opts->trace_max_ctas, "CTA slices kept in the trace")
      ->check(cli::finite_range(0, 999999999999))  // written out: an integer option takes no "1e15"
      ->capture_default_str();
  cmd->add_option(
      "--memory-limit", opts->memory_limit,
      "refuse a grid whose CTAs (about 64 bytes each) need more than SIZE (64G, 512M; 0: no check; "
      "default: what the machine has available, or $PAO_MEMORY_LIMIT)");
  cmd->footer(
      "\nexamples:\n"
      "  # V1 at 4K tokens, V2 with 1024-token partitions at 32K (V1's shared memory stops just below 8K on "
      "the BI-V100)\n"
      "  pao sim run --device bi-v100 --kernel v1 --num-seqs 8 --seq-len 4096\n"
      "  pao sim run --device bi-v100 --kernel v2:1024 --num-seqs 8 --seq-len 32768\n"
      "  # what if the chip had 32 SMs and 900 GB/s?\n"
      "  pao sim run -d bi-v100 -k v2 --set num_sms=32 --set dram_achievable_gbps=900 --seq-len 32768\n"
      "  # chunked prefill: 4 sequences, 2048-token context + 512 new tokens, GQA 32/8\n"
      "  pao sim run -k prefix --num-seqs 4 --seq-len 2560 --query-len 512 --num-heads 32 --num-kv-heads 8\n"
      "  # the host-loop fallback, and a trace to look at\n"
      "  pao sim run -k fallback --seq-len 16384 --trace fallback.json --trace-max-ctas 100000\n"
      "  pao sim run -k v2 --seq-lens 100,5000,30000 --json\n"
      "\nexit status: 0 ok, 1 a kernel does not fit on the device, 2 bad input.");
  cmd->callback([opts, &action] { action = [opts] { return execute(*opts); }; });
}

}  // namespace pao::cli::sim_commands

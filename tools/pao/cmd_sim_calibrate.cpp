// `pao sim calibrate`: fit a descriptor to measured times; held-out error; calibrated descriptor.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/io/csv_read.hpp"
#include "pao/io/output_path.hpp"
#include "pao/sim/studies/calibrate.hpp"
#include "pao/sim/studies/svg.hpp"
#include "sim_options.hpp"

namespace pao::cli::sim_commands {
using Action = std::function<int()>;

namespace {

struct CalibrateOptions {
  sim::DeviceOptions device;
  sim::FitOptions fit;
  std::string out_file;
  double holdout = 0.25;
  std::string synthesize;
  double noise = 0.03;
  std::uint64_t seed = 1;
};

void print_report(const char* what, const sim::ErrorReport& r) {
  std::printf(
      "  %-22s %4zu rows  MAPE %6.2f%%  max %6.2f%%  Spearman %6.3f  decisions %5.1f%% of %zu  regret mean "
      "%4.1f%% max %5.1f%%\n",
      what, r.rows, 100 * r.mape, 100 * r.max_error, r.spearman, 100 * r.decision_accuracy, r.decisions,
      100 * r.mean_regret, 100 * r.max_regret);
}

int execute(const CalibrateOptions& o) {
  std::vector<InputPath> inputs{{"--device", o.device.device}};
  for (const auto& m : o.fit.measurements) inputs.push_back({"--measurements", m});
  // --synthesize writes instead of fitting, but the -m files named beside it are inputs all the same:
  // `-m m.csv --synthesize m.csv` would replace the measurements with a simulation of them.
  check_file_outputs({{"--out", o.out_file}, {"--synthesize", o.synthesize}}, inputs);
  const sim::Device device = o.device.load();
  if (!o.synthesize.empty()) {
    const std::string csv = sim::synthesize_measurements_csv(device, o.noise, o.seed);
    const std::size_t rows = read_csv_records(csv, o.synthesize).size();  // the header and the measurements
    if (rows <= 1) {  // as sweep and advise: no time is not a result, and no file is written
      std::printf(
          "no kernel of the synthetic grid runs on %s: nothing was simulated, which is not a result\n",
          device.name.c_str());
      return 1;
    }
    sim::write_text_file(o.synthesize, csv);
    std::printf("wrote %zu SYNTHETIC measurements from %s (noise %.3g, seed %llu) to %s\n", rows - 1,
                device.name.c_str(), o.noise, static_cast<unsigned long long>(o.seed), o.synthesize.c_str());
    return 0;
  }
  const auto rows = o.fit.load("calibrate (or --synthesize OUT.csv)");
  const std::string origin = o.fit.origin();
  sim::CalibrationOptions copts;
  if (!o.fit.parameters.empty()) copts.parameters = o.fit.parameters;
  copts.holdout_fraction = o.holdout;
  copts.max_iterations = o.fit.max_iterations;
  copts.threads = o.fit.jobs;
  copts.on_iteration = [&](int it, double cost, bool improved) {
    std::fprintf(stderr, "calibrate: iteration %d of at most %d, cost %.6g%s\n", it, o.fit.max_iterations,
                 cost, improved ? "" : " (no improving step)");
  };
  const auto r = sim::calibrate(device, rows, copts, origin);
  if (!o.out_file.empty()) sim::write_text_file(o.out_file, sim::device_to_json(r.calibrated));
  if (o.fit.json) {
    std::fputs(sim::calibration_json(r, device).c_str(), stdout);
    return 0;
  }

  std::printf("device %s, %zu measurements from %s\n", device.name.c_str(), rows.size(), origin.c_str());
  std::printf("fit %zu parameters on %zu rows (%d iterations), held out %zu rows\n\n", r.parameters.size(),
              r.train_rows, r.iterations, r.test_rows);
  std::printf("  %-28s %12s %12s\n", "parameter", "before", "after");
  for (std::size_t j = 0; j < r.parameters.size(); ++j)
    std::printf("  %-28s %12.4g %12.4g\n", r.parameters[j].c_str(), r.before[j], r.after[j]);
  std::printf("\n");
  print_report("train, uncalibrated", r.train_before);
  print_report("train, calibrated", r.train_after);
  print_report("held-out, uncalibrated", r.test_before);
  print_report("held-out, calibrated", r.test_after);
  if (!o.out_file.empty()) {
    std::printf("\ncalibrated descriptor: %s (use it with --device %s)\n", o.out_file.c_str(),
                o.out_file.c_str());
  }
  return 0;
}

}  // namespace

void add_calibrate(CLI::App& sim, Action& action) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = sim.add_subcommand(
      "calibrate",
      "fit achievable bandwidth, per-iteration latency, per-CTA and inter-kernel overheads to measured times "
      "(least squares); report held-out MAPE, max error, Spearman, V1-vs-V2 decision accuracy and regret "
      "(the measured cost of the model's pick over the measured best)");
  opts->device.add_to(*cmd);
  opts->fit.add_to(*cmd, "print the fit and its error reports as JSON instead of text", "");
  cmd->add_option("--out,-o", opts->out_file, "write the calibrated descriptor (JSON) here");
  cmd->add_option("--holdout", opts->holdout, "fraction of workload groups held out for the error report")
      ->check(cli::finite_range(0, 1, true))
      ->capture_default_str();
  cmd->add_option(
      "--synthesize", opts->synthesize,
      "instead: write SYNTHETIC measurements simulated on --device (with --set what-ifs) to this CSV, "
      "to test the pipeline");
  cmd->add_option("--noise", opts->noise, "--synthesize: lognormal noise sigma")
      ->check(cli::finite_range(0, 10))
      ->capture_default_str();
  cmd->add_option("--seed", opts->seed, "--synthesize: random seed")
      ->check(cli::finite_range(0, 18446744073709551615.0))
      ->capture_default_str();
  cmd->footer(
      "\nexamples:\n"
      "  pao sim calibrate --device h200 -m data/measurements/h200-vllm.csv -m "
      "data/measurements/h200-pao-cuda.csv --out h200-calibrated.json\n"
      "  # round trip on synthetic data: simulate a 'true' device, then fit the stock one to it\n"
      "  pao sim calibrate -d h200 --set dram_achievable_gbps=3900 --set iteration_latency_us=0.8 "
      "--synthesize truth.csv\n"
      "  pao sim calibrate -d h200 -m truth.csv");
  cmd->callback([opts, &action] { action = [opts] { return execute(*opts); }; });
}

}  // namespace pao::cli::sim_commands

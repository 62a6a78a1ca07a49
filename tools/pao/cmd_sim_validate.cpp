// `pao sim validate`: a device model against measured kernel times, uncalibrated and with
// leave-one-group-out calibration.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/sim/studies/validate.hpp"
#include "sim_options.hpp"

namespace pao::cli::sim_commands {

using Action = std::function<int()>;

namespace {

struct ValidateOptions {
  sim::DeviceOptions device;
  sim::FitOptions fit;
  std::string gpu;
  bool no_logo = false;
  double margin = 0.05;
};

int execute(const ValidateOptions& o) {
  const sim::Device device = o.device.load();
  auto rows = o.fit.load("validate");
  const std::string origin = o.fit.origin();
  if (!o.gpu.empty()) {
    const auto all = rows.size();
    std::erase_if(rows, [&](const sim::Measurement& m) { return m.gpu.find(o.gpu) == std::string::npos; });
    std::printf("--gpu %s: %zu of %zu rows\n", o.gpu.c_str(), rows.size(), all);
    require(!rows.empty(), "validate: no row of ", origin, " has a gpu column containing '", o.gpu, "'");
  }
  sim::ValidationOptions vopts;
  vopts.decision_margin = o.margin;
  vopts.leave_one_group_out = !o.no_logo;
  if (!o.fit.parameters.empty()) vopts.calibration.parameters = o.fit.parameters;
  vopts.calibration.max_iterations = o.fit.max_iterations;
  vopts.calibration.threads = o.fit.jobs;
  vopts.on_fold = [](std::size_t k, std::size_t n) {
    std::fprintf(stderr, "validate: leave-one-group-out fit %zu of %zu\n", k + 1, n);
  };
  const auto report = sim::validate(device, rows, vopts, origin);
  if (o.fit.json) {
    std::fputs(sim::validation_json(report, device).c_str(), stdout);
    return 0;
  }
  std::printf("measurements %s\n", origin.c_str());
  std::fputs(sim::format_validation(report, device).c_str(), stdout);
  return 0;
}

}  // namespace

void add_validate(CLI::App& sim, Action& action) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* cmd = sim.add_subcommand(
      "validate",
      "predicted against measured times per row and per group: MAPE, max error, Spearman, V1-or-V2 "
      "decisions and their regret (the measured cost of the model's pick over the measured best), V1/V2 "
      "ratios — uncalibrated and with leave-one-group-out calibration");
  opts->device.add_to(*cmd);
  opts->fit.max_iterations = 15;
  opts->fit.add_to(*cmd, "print the report as JSON instead of text", " per LOGO fit");
  cmd->add_option("--gpu", opts->gpu, "only the rows whose gpu (or device) column contains this text");
  cmd->add_flag("--no-logo", opts->no_logo, "skip the leave-one-group-out calibration");
  cmd->add_option("--margin", opts->margin,
                  "measured kernels within this fraction of each other are a tie, not a decision")
      ->check(cli::finite_range(0, 1, true))
      ->capture_default_str();
  cmd->footer(
      "\nexamples:\n"
      "  pao sim validate --device a100-40gb --gpu a100 --measurements data/measurements/published-vllm.csv\n"
      "  pao sim validate --device h200 -m my-h200.csv --no-logo");
  cmd->callback([opts, &action] { action = [opts] { return execute(*opts); }; });
}

}  // namespace pao::cli::sim_commands

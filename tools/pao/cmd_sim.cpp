// `pao sim`: the timing simulator's front end. Dispatches to run, sweep, advise, calibrate and validate, each
// in its own cmd_sim_*.cpp file.
#include <CLI/CLI.hpp>
#include <functional>

#include "cli_parse.hpp"
#include "commands.hpp"

namespace pao::cli::sim_commands {
using Action = std::function<int()>;
// Each registers its subcommand on `sim`; when the subcommand is chosen, `action` is set to run it.
void add_run(CLI::App& sim, Action& action);
void add_sweep(CLI::App& sim, Action& action);
void add_advise(CLI::App& sim, Action& action);
void add_calibrate(CLI::App& sim, Action& action);
void add_validate(CLI::App& sim, Action& action);
}  // namespace pao::cli::sim_commands

namespace pao::cli {

int run_sim(int argc, char** argv) {
  CLI::App app{
      "pao sim — times vLLM paged attention (V1, V2 + reduce, prefix, a host-loop fallback) on a model\n"
      "of a GPU at CTA granularity: the CTAs come from pao's plan, the device from a JSON descriptor\n"
      "in data/devices. Every number in a descriptor carries its source and confidence; the BI-V100's\n"
      "per-SM numbers are assumptions until calibrated (see docs/simulator.md).",
      "pao sim"};
  app.require_subcommand(1);
  app.footer(
      "\nexamples:\n"
      "  pao sim run --device bi-v100 --kernel v2 --num-seqs 8 --seq-len 32768\n"
      "  pao sim sweep --device bi-v100 --kernels v1,v2:512,v2:1024 --axis seq-len=512:65536:x2 --csv s.csv "
      "--svg s.svg\n"
      "  pao sim advise --device bi-v100 --svg advice.svg\n"
      "  pao sim calibrate --device h200 --measurements data/measurements/example-synthetic.csv --out "
      "h200-cal.json\n"
      "  pao sim validate --device a100-40gb --measurements data/measurements/published-vllm.csv\n"
      "\nrun `pao sim <subcommand> --help` for each subcommand's options.");
  sim_commands::Action action;
  sim_commands::add_run(app, action);
  sim_commands::add_sweep(app, action);
  sim_commands::add_advise(app, action);
  sim_commands::add_calibrate(app, action);
  sim_commands::add_validate(app, action);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  return action ? action() : 2;
}

}  // namespace pao::cli

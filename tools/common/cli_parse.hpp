// One way every pao command-line tool (the `pao` subcommands, pao-cuda-check, pao-cuda-bench)
// parses its command line and exits: 0 for --help / --version (printed), 2 for a usage error
// (printed with the tool's name), nothing when parsing succeeded and the command should run. The
// exit statuses of pao, everywhere: 0 success, 1 the result is negative (a mismatch, an unsound
// golden, a missed bug), 2 bad input or usage; the CUDA tools add 3 (a CUDA error) and 77 (no
// CUDA device: nothing was run, which ctest reports as a skip).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

namespace pao::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitCudaError = 3;
inline constexpr int kExitNoDevice = 77;

/// The command as the user typed it, down to the subcommand being parsed ("pao sim run").
inline std::string command_path(const CLI::App& app) {
  std::string name = app.get_name();
  for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
    a = a->get_subcommands().front();
    name += " " + a->get_name();
  }
  return name;
}

/// Parses; returns the exit status when the command must stop (help shown, or a usage error). A
/// usage error reads like every other error of the tool: "<command>: error: <what>", then where the
/// options are explained.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {  // --help, --version
      app.exit(e);
      return kExitOk;
    }
    const std::string name = command_path(app);
    std::fprintf(stderr, "%s: error: %s\nrun '%s --help' for the options\n", name.c_str(), e.what(),
                 name.c_str());
    return kExitBadInput;  // CLI11's own codes (105, 106, 109...) are not ours
  }
  return std::nullopt;
}

}  // namespace pao::cli

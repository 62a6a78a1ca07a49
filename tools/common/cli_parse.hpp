// One way every pao command-line tool (the `pao` subcommands, pao-cuda-check, pao-cuda-bench)
// parses its command line and exits: 0 for --help / --version (printed), 2 for a usage error
// (printed with the tool's name), nothing when parsing succeeded and the command should run. The
// exit statuses of pao, everywhere: 0 success, 1 the result is negative (a mismatch, an unsound
// golden, a missed bug), 2 bad input or usage; the CUDA tools add 3 (a CUDA error) and 77 (no
// CUDA device: nothing was run, which ctest reports as a skip).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace pao::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitCudaError = 3;
inline constexpr int kExitNoDevice = 77;

/// Parses; returns the exit status when the command must stop (help shown, or a usage error).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;  // CLI11's own codes (105, 106, 109...) are not ours
  }
  return std::nullopt;
}

}  // namespace pao::cli

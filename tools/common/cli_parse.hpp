// One way every pao command-line tool (the `pao` subcommands, pao-cuda-check, pao-cuda-bench)
// parses its command line and exits: 0 for --help / --version (printed), 2 for a usage error
// (printed with the tool's name), nothing when parsing succeeded and the command should run. The
// exit statuses of pao, everywhere: 0 success, 1 the result is negative (a mismatch, an unsound
// golden, a missed bug), 2 bad input or usage; the CUDA tools add 3 (a CUDA error) and 77 (no
// CUDA device: nothing was run, which ctest reports as a skip).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "pao/core/excerpt.hpp"

namespace pao::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNegative = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitCudaError = 3;
inline constexpr int kExitNoDevice = 77;

/// A numeric option's range check: the value must be a finite number in [lo, hi] (or [lo, hi) with
/// `hi_open`; hi = HUGE_VAL: no upper bound). CLI::Range lets NaN through (every comparison with NaN
/// is false) and inf past an infinite bound; this one does not, and names the option and its rule:
/// "--margin: 'nan' is not a finite number (must be in [0, 1))", "--repeats: '0' must be >= 1".
/// Integer options take it too (the text is read as a number first).
inline CLI::Validator finite_range(double lo, double hi, bool hi_open = false) {
  const auto text_of = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return std::string(buf);
  };
  const std::string rule = std::isinf(hi) ? ">= " + text_of(lo)
                                          : "in [" + text_of(lo) + ", " + text_of(hi) + (hi_open ? ")" : "]");
  return CLI::Validator(
      [lo, hi, hi_open, rule](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number (must be " + rule + ")";
        if (v >= lo && (hi_open ? v < hi : v <= hi)) return {};
        return "'" + text + "' must be " + rule;
      },
      rule);
}

/// finite_range without an upper bound: "--num-seqs: '0' must be >= 1".
inline CLI::Validator at_least(double lo) { return finite_range(lo, HUGE_VAL); }

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
    std::fprintf(stderr, "%s: error: %s\nrun '%s --help' for the options\n", name.c_str(),
                 pao::shortened_message(e.what()).c_str(), name.c_str());
    return kExitBadInput;  // CLI11's own codes (105, 106, 109...) are not ours
  }
  return std::nullopt;
}

}  // namespace pao::cli

// What every pao tool does first, before its command runs: one signal policy (SIGINT and SIGTERM
// exit 130, temporaries removed; pao/io/atomic_file.hpp), and the thread-count variables of the
// environment checked (pao/core/thread_env.hpp), so that OMP_NUM_THREADS=100000000 is a
// "<tool>: error: OMP_NUM_THREADS=..." line and exit 2, not a death inside libgomp.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/core/thread_env.hpp"
#include "pao/io/atomic_file.hpp"

namespace pao::cli {

/// Every line of stdout and stderr reaches a log when it is printed, even into a pipe or a file:
/// a run killed by its deadline (a lent GPU's) keeps everything it printed. The CUDA tools' first
/// call.
inline void line_buffered_output() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::setvbuf(stderr, nullptr, _IOLBF, 0);
}

/// `command` as the tool's errors name it ("pao golden", "pao-bench"). Returns the exit status
/// when the tool must stop (a thread-count variable it cannot honour), nothing otherwise.
inline std::optional<int> start_tool(std::string_view command) {
  std::string note(command);
  note += ": interrupted; temporary files removed, nothing left half-written";
  install_temporary_cleanup(note);
  try {
    require_thread_environment();
  } catch (const Error& e) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(), e.what());
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace pao::cli

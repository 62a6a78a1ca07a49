// `pao`: the command-line front end. Dispatches `pao <command> ...` to the subcommand files.
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "tool_start.hpp"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Command kCommands[] = {
    {"example", "run one decode case on the embedded defaults (V1 vs V2, exact vs kernel)",
     pao::cli::run_example},
    {"sim", "time kernels on a GPU model: run, sweep, advise, calibrate", pao::cli::run_sim},
    {"golden", "write golden files for a case or a suite (resumable, shardable)", pao::cli::run_golden},
    {"diff", "compare vendor outputs with goldens: locations, patterns, JSON/JUnit", pao::cli::run_diff},
    {"verify", "check that goldens can be trusted: manifest hashes, attention invariants, rebuild",
     pao::cli::run_verify},
    {"audit", "run every mutation over a suite: which bugs pao diff catches, which correct kernels pass",
     pao::cli::run_audit},
    {"mutate", "vendor-style outputs from goldens, optionally with a planted bug (to try pao diff)",
     pao::cli::run_mutate},
};

void print_usage() {
  std::printf(
      "pao — Paged Attention Oracle\n\n"
      "usage: pao <command> [options]     (pao <command> --help for details)\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (std::string_view(argv[1]) == "--version") {
    std::printf("pao %s\n", PAO_VERSION);
    return 0;
  }
  for (const auto& c : kCommands) {
    if (std::string_view(argv[1]) != c.name) continue;
    // Signals (130 for SIGINT and SIGTERM, temporaries removed) and the thread environment, for
    // every command; a command may install its own note (pao golden's says how to resume).
    std::string command = "pao ";
    command += c.name;
    if (const auto status = pao::cli::start_tool(command)) return *status;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const pao::Error& e) {
      std::fprintf(stderr, "pao %s: error: %s\n", c.name, pao::shortened_message(e.what()).c_str());
      return 2;
    } catch (const std::filesystem::filesystem_error& e) {
      std::fprintf(stderr, "pao %s: error: %s\n", c.name, pao::shortened_message(e.what()).c_str());
      return 2;
    } catch (const std::bad_alloc&) {
      // The memory checks (pao/core/memory.hpp) refuse what they can foresee; this is the rest.
      std::fprintf(stderr,
                   "pao %s: error: out of memory: an allocation failed (the machine's memory, its cgroup "
                   "or ulimit -v); make the case or workload smaller\n",
                   c.name);
      return 2;
    } catch (const std::exception& e) {
      // Still exit status 2 (0 / 1 / 2 everywhere); the wording asks for a report.
      std::fprintf(stderr, "pao %s: internal error (please report it): %s\n", c.name,
                   pao::shortened_message(e.what()).c_str());
      return 2;
    }
  }
  std::fprintf(stderr, "pao: unknown command '%s'\n\n", argv[1]);
  print_usage();
  return 2;
}

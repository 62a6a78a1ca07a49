// pao-bench: how fast the oracle runs against this machine's own limits, measured in the same
// run. For each case it prints bytes of K/V attended, FLOPs, seconds, GB/s, GFLOP/s and the
// roofline fraction: (the lower bound on time from bytes / triad bandwidth and FLOPs / FMA peak)
// / measured time. Exact precision is held to the fp64 FMA peak, kernel precision to the fp32 one.
// Kernel precision emulates f16 arithmetic where the GPU kernel has it (vLLM's f16 P·V), so for
// f16 cases it also prints the floor that the measured f16 rounding rate sets.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bench_cases.hpp"
#include "cli_parse.hpp"
#include "machine_limits.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"
#include "tool_start.hpp"

namespace {

using pao::bench::BenchCase;
using pao::bench::MachineLimits;

struct Result {
  std::string name;
  std::string precision;
  double kv_bytes, flops, seconds;
  double roofline_bound_s;
  double f16_roundings = 0, f16_bound_s = 0;  // kernel precision of f16 cases
};

nlohmann::json to_json(const Result& r) {
  return {{"case", r.name},
          {"precision", r.precision},
          {"kv_bytes", r.kv_bytes},
          {"flops", r.flops},
          {"seconds", r.seconds},
          {"gb_per_s", r.kv_bytes / r.seconds / 1e9},
          {"gflop_per_s", r.flops / r.seconds / 1e9},
          {"roofline_bound_s", r.roofline_bound_s},
          {"roofline_fraction", r.roofline_bound_s / r.seconds},
          {"f16_roundings", r.f16_roundings},
          {"f16_rounding_bound_s", r.f16_bound_s},
          {"f16_rounding_bound_fraction", r.f16_bound_s > 0 ? r.f16_bound_s / r.seconds : 0.0}};
}

int run(const std::vector<std::string>& cases, const std::vector<std::string>& case_files,
        const std::string& json_path, int repeats);

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "pao-bench: speed of the oracle's kernels against this machine's measured limits.\n\n"
      "Cases: the suite data/cases/bench.json, or any case JSON (a golden's case, docs/golden.md):\n"
      "  decode   8 seqs x 32768 tokens, 32 query / 8 KV heads, head size 128, block 16, f16\n"
      "  prefill  4 seqs x (2048 context + 512 new), 32/8 heads, head size 128, f16\n"
      "examples:\n"
      "  pao-bench --cases decode --json bench.json\n"
      "  pao-bench --cases none --case my_case.json",
      "pao-bench"};
  std::vector<std::string> cases{"decode", "prefill"};
  std::vector<std::string> case_files;
  std::string json_path;
  int repeats = 2;
  app.add_option("--cases", cases, "ids of data/cases/bench.json to run ('none': only --case files)")
      ->capture_default_str();
  app.add_option("--case", case_files, "also run this case JSON (repeatable)")->check(CLI::ExistingFile);
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_option("--repeats", repeats, "runs per case and precision; the fastest counts")
      ->check(pao::cli::finite_range(1, 1e6))
      ->capture_default_str();
  if (const auto status = pao::cli::parse_command_line(app, argc, argv)) return *status;
  if (const auto status = pao::cli::start_tool("pao-bench")) return *status;
  try {
    return run(cases, case_files, json_path, repeats);
  } catch (const pao::Error& e) {
    std::fprintf(stderr, "pao-bench: error: %s\n", e.what());
    return pao::cli::kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "pao-bench: error: out of memory: an allocation failed (the machine's memory, its cgroup or "
                 "ulimit -v); run smaller cases\n");
    return pao::cli::kExitBadInput;
  }
}

namespace {

int run(const std::vector<std::string>& cases, const std::vector<std::string>& case_files,
        const std::string& json_path, int repeats) {
  std::vector<pao::cases::Case> selected;
  {
    const std::filesystem::path suite_file = pao::cases::find_suite("bench", pao::cases::cases_dir());
    // The report may not be an input (a --case file, the bench suite), and must be writable: both
    // checked before the machine's limits are measured, not after the run.
    std::vector<pao::InputPath> inputs{{"--cases (data/cases/bench.json)", suite_file}};
    for (const auto& f : case_files) inputs.push_back({"--case", f});
    pao::check_file_outputs({{"--json", json_path}}, inputs);
    const auto suite = pao::cases::expand_suite(suite_file, true);
    for (const auto& id : cases) {
      if (id == "none") continue;
      const auto it = std::find_if(suite.begin(), suite.end(), [&](const auto& c) { return c.id == id; });
      pao::require(it != suite.end(), "--cases: no case '", id,
                   "' in data/cases/bench.json (decode, prefill)");
      selected.push_back(*it);
    }
    for (const auto& f : case_files) selected.push_back(pao::cases::load_case_file(f));
    // Nothing timed is not a result (an empty table, exit 0, would pass a CI job that times nothing).
    pao::require(!selected.empty(),
                 "nothing to time: --cases none and no --case; name a case of data/cases/bench.json "
                 "(decode, prefill) or give --case FILE");
    // Every case is checked before the machine's limits are measured (seconds) or anything allocated.
    for (const auto& c : selected) pao::bench::require_benchable(c);
  }

  std::printf("measuring machine limits (%d threads) ...\n", omp_get_max_threads());
  const MachineLimits m = pao::bench::measure_machine_limits();
  std::printf("  triad bandwidth %.1f GB/s   fp32 FMA peak %.1f GFLOP/s   fp64 FMA peak %.1f GFLOP/s\n",
              m.triad_gb_per_s, m.fp32_gflops, m.fp64_gflops);
  std::printf("  f16 round trips (fp32 -> f16 -> fp32) %.1f G/s\n\n", m.f16_roundings_per_s / 1e9);

  std::vector<Result> results;
  std::printf("%-8s %-7s %10s %10s %9s %8s %10s %10s\n", "case", "prec", "KV GB", "GFLOP", "seconds", "GB/s",
              "GFLOP/s", "roofline");
  for (const auto& c : selected) {
    const std::string& name = c.id;
    // Progress on stderr, so that stdout stays the table when piped.
    std::fprintf(stderr, "building %s case ...\r", name.c_str());
    const BenchCase bc = pao::bench::make_bench_case(c);
    std::fprintf(stderr, "%-40s\r", "");  // clears the progress line
    for (const char* prec : {"exact", "kernel"}) {
      const bool exact = std::string(prec) == "exact";
      double best = 1e30;
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        bc.run(exact);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      const double peak = (exact ? m.fp64_gflops : m.fp32_gflops) * 1e9;
      const double bound = std::max(bc.kv_bytes / (m.triad_gb_per_s * 1e9), bc.flops / peak);
      Result res{name, prec, bc.kv_bytes, bc.flops, best, bound};
      if (!exact && bc.kernel_f16_roundings > 0) {
        res.f16_roundings = bc.kernel_f16_roundings;
        res.f16_bound_s = bc.kernel_f16_roundings / m.f16_roundings_per_s;
      }
      results.push_back(res);
      std::printf("%-8s %-7s %10.3f %10.2f %9.3f %8.2f %10.2f %9.1f%%\n", name.c_str(), prec,
                  bc.kv_bytes / 1e9, bc.flops / 1e9, best, bc.kv_bytes / best / 1e9, bc.flops / best / 1e9,
                  100 * bound / best);
      if (res.f16_bound_s > 0)
        std::printf(
            "%-8s %-7s   %.2f G f16 roundings: >= %.3f s at the measured rate, %.1f%% of that floor\n", "",
            "", res.f16_roundings / 1e9, res.f16_bound_s, 100 * res.f16_bound_s / best);
    }
  }
  if (!json_path.empty()) {
    nlohmann::json j;
    j["machine"] = {{"threads", m.threads},
                    {"triad_gb_per_s", m.triad_gb_per_s},
                    {"fp32_gflops", m.fp32_gflops},
                    {"fp64_gflops", m.fp64_gflops},
                    {"f16_roundings_per_s", m.f16_roundings_per_s}};
    for (const auto& r : results) j["results"].push_back(to_json(r));
    // Written atomically: a failed write is an error naming --json, never a silent exit 0.
    const std::string text = j.dump(2) + "\n";
    try {
      pao::write_file_atomically(json_path, std::as_bytes(std::span(text.data(), text.size())));
    } catch (const pao::Error& e) {
      pao::fail("--json ", json_path, ": ", e.what());
    }
    std::printf("\nresults written to %s\n", json_path.c_str());
  }
  return 0;
}

}  // namespace

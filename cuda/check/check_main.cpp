// pao-cuda-check: runs decode and prefix cases on the GPU and judges every tensor through pao diff
// (lib/diff) against a golden made in memory — the kernel precision bit for bit (the bitwise rule),
// the exact precision under pao diff's default rule — after checking the shared numerics
// (kernel_exp, kernel_tanh, roundings, decodes) on the device.
//
// Exit: 0 every tensor matches; 1 a mismatch or overwritten guard bytes; 2 bad usage or input;
// 3 a CUDA error; 77 no usable CUDA device (nothing was checked; ctest reports a skip) — the
// statuses of tools/common/cli_parse.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "check/case_oracle.hpp"
#include "check/device_math.hpp"
#include "check/gpu_run.hpp"
#include "check/ordered_parallel.hpp"
#include "check/run_progress.hpp"
#include "cli_parse.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/diff/report.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kernel_math.hpp"
#include "tool_start.hpp"
#include "tools/cuda_tool_mains.hpp"

namespace {

using namespace pao;
using namespace pao::cuda::check;
namespace tools = pao::cuda::tools;

struct Options {
  std::string suite;
  bool full = false;
  std::vector<std::string> case_files;
  bool list = false;
  bool exact = true;
  bool math = true;
  std::int64_t math_values = std::int64_t{1} << 24;
  bool quiet = false;
  double budget_s = 0;
};

constexpr const char* kDescription =
    "Runs decode and prefix cases on the GPU (or under GPGPU-Sim: tools/gpgpusim) and judges every tensor\n"
    "through pao diff against a golden made in memory: v1.out, v2.out, v2.tmp_out, v2.max_logits,\n"
    "v2.exp_sums (decode) and prefix.out bit for bit against the kernel precision (the bitwise rule), and\n"
    "against the exact precision under pao diff's default rule; guard bytes around every buffer. The\n"
    "kernel precision is vLLM's GPU (warp 32, 128 threads per CTA) with the case's partitions and tiles.\n"
    "First the shared numerics (kernel_exp, kernel_tanh, the roundings to f16 / bf16, every f16 / bf16 /\n"
    "fp8 decode) on the device. The oracle side runs on every core (OpenMP), a window of cases at a\n"
    "time; the GPU side and the output stay serial, in case order, a line at a time; a progress line\n"
    "with an ETA on stderr at most every 2 s, --quiet or not.\n"
    "Exit: 0 all match (a run --budget-s stopped says how many cases it left), 1 a mismatch, 2 bad\n"
    "usage or input, 3 a CUDA error, 77 no CUDA device.";

struct Tally {
  int passed = 0, failed = 0;
  bool quiet = false;
  void add(bool ok, const std::string& line) {
    ok ? ++passed : ++failed;
    if (!ok || !quiet) std::printf("%s\n", line.c_str());
  }
};

template <typename T>
std::uint64_t bits_of(T v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

/// "0x3c00 (1)" for a code, "1.5 (0x3fc00000)" for a float: what a mismatch line shows.
template <typename T>
std::string show(T v) {
  char text[64];
  if constexpr (std::is_floating_point_v<T>)
    std::snprintf(text, sizeof text, "%.9g (0x%08llx)", static_cast<double>(v),
                  static_cast<unsigned long long>(bits_of(v)));
  else
    std::snprintf(text, sizeof text, "0x%04llx", static_cast<unsigned long long>(v));
  return text;
}

/// One line per function: the device values against the host's, bit for bit (NaN = NaN), with
/// the first mismatch's input and both values.
template <typename T, typename Host>
void compare_values(Tally& t, const char* name, const std::vector<float>& inputs,
                    const std::vector<T>& device, Host host, bool skip_nan_inputs) {
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < device.size(); ++i) {
    const float x = inputs.empty() ? 0.0f : inputs[i];
    if (skip_nan_inputs && x != x) continue;
    const T want = host(i);
    const bool both_nan = [&] {
      if constexpr (std::is_floating_point_v<T>)
        return want != want && device[i] != device[i];
      else
        return false;
    }();
    if (bits_of(want) != bits_of(device[i]) && !both_nan) {
      if (mismatches++ == 0) first = i;
    }
  }
  std::string line;
  if (mismatches == 0) {
    line = "PASS math " + std::string(name) + ": " + std::to_string(device.size()) + " values bit-identical";
  } else {
    const std::string input =
        inputs.empty() ? "code " + show(static_cast<std::uint32_t>(first)) : "input " + show(inputs[first]);
    line = "FAIL math " + std::string(name) + ": " + std::to_string(mismatches) + " of " +
           std::to_string(device.size()) + " values differ; first: " + input + " -> device " +
           show(device[first]) + ", host " + show(host(first));
  }
  t.add(mismatches == 0, line);
}

/// `count` of the 2^24 inputs i * 256 + (i * 7919) % 256 (floats spread over every exponent, both
/// signs), evenly spaced in i, plus the special values.
void check_math(Tally& t, std::int64_t count) {
  std::vector<float> x;
  x.reserve(static_cast<std::size_t>(count) + 8);
  const std::uint64_t all = std::uint64_t{1} << 24;
  for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(count); ++k) {
    const auto i = static_cast<std::uint32_t>(k * all / static_cast<std::uint64_t>(count));
    const std::uint32_t bits = i * 256u + (i * 7919u) % 256u;
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 88.72283935546875f, -103.97908782958984f, 65504.0f, 65520.0f})
    x.push_back(f);
  const DeviceMath d = run_device_math(x);
  compare_values(
      t, "kernel_exp", x, d.exp, [&](std::size_t i) { return kernel_exp(x[i]); }, false);
  compare_values(
      t, "kernel_tanh", x, d.tanh, [&](std::size_t i) { return kernel_tanh(x[i]); }, false);
  compare_values(
      t, "round to f16", x, d.f16, [&](std::size_t i) { return encode_f16_from_f32(x[i]); }, true);
  compare_values(
      t, "round to bf16", x, d.bf16, [&](std::size_t i) { return encode_bf16_from_f32(x[i]); }, true);
  const std::vector<float> none;
  compare_values(
      t, "decode f16", none, d.f16_decoded,
      [](std::size_t i) { return decode_f16(static_cast<std::uint16_t>(i)); }, false);
  compare_values(
      t, "decode bf16", none, d.bf16_decoded,
      [](std::size_t i) { return decode_bf16(static_cast<std::uint16_t>(i)); }, false);
  compare_values(
      t, "decode fp8_e4m3", none, d.e4m3_decoded,
      [](std::size_t i) { return decode_fp8_e4m3(static_cast<std::uint8_t>(i)); }, false);
  compare_values(
      t, "decode fp8_e5m2", none, d.e5m2_decoded,
      [](std::size_t i) { return decode_fp8_e5m2(static_cast<std::uint8_t>(i)); }, false);
}

/// One judgement of a case's GPU outputs: a line per tensor (pao diff's), under a header naming the
/// case and the reference; details for the failing ones.
void report(Tally& t, const diff::CaseReport& r, const std::string& against) {
  bool printed = false;
  const auto header = [&] {
    if (!printed) std::printf("case %s %s\n", r.case_id.c_str(), against.c_str());
    printed = true;
  };
  if (!r.error.empty()) {
    header();
    t.add(false, "  ERROR  " + r.error);
    return;
  }
  for (const auto& tensor : r.tensors) {
    if (!tensor.passed || !t.quiet) header();
    std::string text = diff::render_tensor_text(tensor);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    t.add(tensor.passed, text);
  }
  if (!t.quiet)
    for (const auto& note : r.notes) std::printf("  note: %s\n", note.c_str());
}

/// Runs one case on every launch variant of its kind that has a CUDA kernel and judges the outputs
/// against its oracle (computed beforehand, case_oracle); false when its input is bad (the oracle
/// rejects it).
bool check_case(Tally& t, CaseOracle o, bool with_exact) {
  const cases::Case& c = o.c;
  if (!o.skip.empty()) {
    std::printf("skip  %s: %s\n", c.id.c_str(), o.skip.c_str());
    return true;
  }
  if (!o.bad_case.empty()) {
    t.add(false, "FAIL " + c.id + ": bad case: " + o.bad_case);
    return false;
  }
  // A launcher Status (e.g. V1 over the shared-memory limit) fails the variant; a CUDA error
  // (CudaError) propagates and stops the run.
  std::vector<std::pair<std::string, Tensor>> outputs;
  for (const KernelVariant v : o.variants) {
    try {
      GpuRun run = run_on_gpu(v, o.golden);
      for (auto& named : run.outputs) outputs.push_back(std::move(named));
      for (const auto& failure : run.guard_failures)
        t.add(false, "FAIL " + c.id + " " + to_string(v) + " " + failure);
    } catch (const CudaError&) {
      throw;
    } catch (const Error& e) {
      t.add(false, "FAIL " + c.id + " " + to_string(v) + ": " + e.what());
    }
  }
  if (outputs.empty()) return true;
  const golden::TensorFile expected =
      golden::TensorFile::in_memory(c.id, o.golden.metadata, std::move(o.golden.tensors));
  const golden::TensorFile gpu = golden::TensorFile::in_memory(c.id + " on the GPU", {}, std::move(outputs));
  diff::DiffOptions bitwise;
  diff::PolicyOverride every_tensor;
  every_tensor.tensor = "*";
  every_tensor.rule = diff::Rule::bitwise;
  every_tensor.rule_explicit = true;
  bitwise.overrides.push_back(every_tensor);
  report(t, diff::diff_case(expected, gpu, bitwise), "vs the kernel precision, bit for bit");
  if (with_exact) {
    diff::DiffOptions exact;
    exact.check_invariants = false;  // checked by the first diff
    report(t, diff::diff_case(expected, gpu, exact), "vs the exact precision (pao diff's default rule)");
  }
  return true;
}

}  // namespace

int pao_cuda_check_main(int argc, char** argv) {
  cli::line_buffered_output();  // a run killed by its deadline keeps every line it checked
  Options o;
  CLI::App app(kDescription, "pao-cuda-check");
  auto* suite =
      app.add_option("--suite", o.suite,
                     "a suite of data/cases (or a suite .json path), as `pao golden` takes it: smoke,\n"
                     "edges (every edge once), instances (with --full: every kernel instantiation),\n"
                     "vllm, fp8, gpgpusim, ...");
  app.add_flag("--full", o.full, "the suite's full product instead of its pairwise cover");
  auto* case_files = app.add_option("--case", o.case_files,
                                    "a decode or prefix case JSON (docs/golden.md), e.g.\n"
                                    "a golden's case; repeatable");
  suite->excludes(case_files);
  app.add_flag("--list", o.list, "print the cases and exit (no GPU needed)");
  app.add_flag("!--no-exact", o.exact, "skip the comparison with the exact precision");
  app.add_flag("!--no-math", o.math, "skip the device check of the shared numerics");
  app.add_option("--math-values", o.math_values,
                 "how many of the 2^24 float inputs the numerics check evaluates, spread evenly over\n"
                 "them (plus the special values); fewer for a simulator")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  app.add_flag("--quiet", o.quiet, "print failures and the summary only (the progress line stays)");
  app.add_option("--budget-s", o.budget_s,
                 "stop between cases when the next one would end past this many seconds of wall\n"
                 "time (estimated from the mean case so far); 0: no budget")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (const auto exit = cli::parse_command_line(app, argc, argv)) return *exit;
  if (o.suite.empty() && o.case_files.empty()) {
    std::fprintf(stderr, "pao-cuda-check: error: give --suite NAME or --case FILE (see --help)\n");
    return cli::kExitBadInput;
  }

  std::vector<cases::Case> cases;
  try {
    if (!o.suite.empty()) cases = cases::expand_suite(cases::find_suite(o.suite, cases::cases_dir()), o.full);
    for (const auto& f : o.case_files) cases.push_back(cases::load_case_file(f));
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-check: error: %s\n", e.what());
    return cli::kExitBadInput;
  }
  if (o.list) {
    for (const auto& c : cases) std::printf("%s: %s\n", c.id.c_str(), cases::describe(c).c_str());
    return 0;
  }

  std::string why;
  if (!cuda_device_available(why)) {
    std::printf("pao-cuda-check: SKIPPED, no usable CUDA device (%s): nothing was checked\n", why.c_str());
    return cli::kExitNoDevice;
  }
  std::printf("pao-cuda-check: %s, %zu case(s)\n", cuda_device_name().c_str(), cases.size());

  Tally t;
  t.quiet = o.quiet;
  int bad_input = 0;
  const tools::BudgetClock clock(o.budget_s);
  tools::ProgressLine progress(stderr, "pao-cuda-check", cases.size(), clock);
  std::size_t checked = 0;
  double cases_start = 0;
  // The budget's estimate of the next case: the mean wall time of a case so far (oracle included).
  const auto next_case_fits = [&] {
    const double mean = checked ? (clock.elapsed_s() - cases_start) / static_cast<double>(checked) : 0;
    return clock.allows(mean);
  };
  try {
    if (o.math) check_math(t, o.math_values);
    cases_start = clock.elapsed_s();
    double last = cases_start;
    for_each_in_order<CaseOracle>(
        cases.size(), default_window(), [&](std::size_t i) { return case_oracle(cases[i]); },
        [&](std::size_t i, CaseOracle&& oracle) {
          if (!check_case(t, std::move(oracle), o.exact)) ++bad_input;
          ++checked;
          const double now = clock.elapsed_s();
          char what[96];
          std::snprintf(what, sizeof what, "%d passed, %d failed; last case", t.passed, t.failed);
          progress.step_every(2.0, checked, std::string(what) + " " + cases[i].id, now - last);
          last = now;
          return next_case_fits();
        },
        next_case_fits);
  } catch (const CudaError& e) {
    std::printf("pao-cuda-check: CUDA error, stopping: %s\n", e.what());
    std::printf("%d passed, %d failed\n", t.passed, t.failed + 1);
    return cli::kExitCudaError;
  }
  if (checked < cases.size()) {
    const std::string stop = tools::budget_stop_line("pao-cuda-check", clock, cases.size() - checked,
                                                     cases.size(), "cases", "not checked");
    std::printf("%s\n", stop.c_str());
    std::fprintf(stderr, "%s\n", stop.c_str());
  }
  std::printf("%d passed, %d failed\n", t.passed, t.failed);
  if (t.failed == 0) return 0;
  return bad_input == t.failed ? cli::kExitBadInput
                               : cli::kExitNegative;  // only bad cases: the input's fault
}

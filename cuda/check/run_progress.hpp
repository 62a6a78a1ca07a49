// What pao-cuda-check and pao-cuda-bench share to spend a lent GPU's minutes well: a budget clock
// (--budget-s: stop between rows when the next one would not finish) and a progress line with an
// ETA on stderr. Plain C++ (pao_cuda_tools_host), so the CPU tests drive both with a fake clock.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace pao::cuda::tools {

/// Seconds since an arbitrary start; the tools use std::chrono::steady_clock, the tests a fake.
using SecondsClock = std::function<double()>;
SecondsClock steady_seconds();

/// The wall time of a run against its budget (--budget-s; 0 = none). A run asks allows(estimate)
/// before each row and stops cleanly when the row would end past the budget.
class BudgetClock {
 public:
  explicit BudgetClock(double budget_s = 0, SecondsClock now = steady_seconds());
  double elapsed_s() const;
  bool limited() const { return budget_s_ > 0; }
  double budget_s() const { return budget_s_; }
  /// Whether a step estimated to take `estimate_s` still ends within the budget (always, unlimited).
  bool allows(double estimate_s) const;

 private:
  double budget_s_;
  SecondsClock now_;
  double start_;
};

/// "[12/144] what: 0.8 s; 9.6 s elapsed, ETA 1m55s" on `out`, flushed. The ETA is the mean time
/// of the steps done so far times the steps left.
class ProgressLine {
 public:
  ProgressLine(std::FILE* out, std::string tool, std::size_t total, const BudgetClock& clock);
  /// Prints the line for step `done` of total (1-based), which took `step_s`.
  void step(std::size_t done, std::string_view what, double step_s);
  /// As step(), but at most once every `interval_s` seconds (and always for the last step).
  void step_every(double interval_s, std::size_t done, std::string_view what, double step_s);
  /// The line of step() without printing it.
  std::string line(std::size_t done, std::string_view what, double step_s) const;

 private:
  std::FILE* out_;
  std::string tool_;
  std::size_t total_;
  const BudgetClock& clock_;
  double last_print_ = -1e300;
};

/// "1h02m", "3m05s", "42 s", "0.8 s".
std::string format_duration(double seconds);

/// The line a run stopped by its budget prints (on stdout and stderr): "<tool>: stopped by
/// --budget-s 60 after 61.2 s: 12 of 144 <unit> left (<hint>)".
std::string budget_stop_line(std::string_view tool, const BudgetClock& clock, std::size_t left,
                             std::size_t total, std::string_view unit, std::string_view hint);

}  // namespace pao::cuda::tools

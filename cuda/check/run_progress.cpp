// The budget clock and progress line of the CUDA tools (check/run_progress.hpp).
#include "check/run_progress.hpp"

#include <chrono>
#include <cmath>
#include <utility>

namespace pao::cuda::tools {

SecondsClock steady_seconds() {
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
}

BudgetClock::BudgetClock(double budget_s, SecondsClock now)
    : budget_s_(budget_s), now_(std::move(now)), start_(now_()) {}

double BudgetClock::elapsed_s() const { return now_() - start_; }

bool BudgetClock::allows(double estimate_s) const {
  return !limited() || elapsed_s() + estimate_s <= budget_s_;
}

std::string format_duration(double s) {
  char text[32];
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  if (s < 10) {
    std::snprintf(text, sizeof text, "%.1f s", s);
  } else if (s < 60) {
    std::snprintf(text, sizeof text, "%.0f s", s);
  } else if (s < 3600) {
    const auto whole = static_cast<long>(std::lround(s));
    std::snprintf(text, sizeof text, "%ldm%02lds", whole / 60, whole % 60);
  } else {
    const auto minutes = static_cast<long>(std::lround(s / 60));
    std::snprintf(text, sizeof text, "%ldh%02ldm", minutes / 60, minutes % 60);
  }
  return text;
}

ProgressLine::ProgressLine(std::FILE* out, std::string tool, std::size_t total, const BudgetClock& clock)
    : out_(out), tool_(std::move(tool)), total_(total), clock_(clock) {}

std::string ProgressLine::line(std::size_t done, std::string_view what, double step_s) const {
  const double elapsed = clock_.elapsed_s();
  std::string text = tool_;
  text += ": [";
  text += std::to_string(done);
  text += "/";
  text += std::to_string(total_);
  text += "] ";
  text += what;
  if (step_s >= 0) {
    text += ": ";
    text += format_duration(step_s);
  }
  text += "; ";
  text += format_duration(elapsed);
  text += " elapsed";
  if (done > 0 && done < total_) {
    text += ", ETA ";
    text += format_duration(elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
  }
  if (clock_.limited()) {
    text += " (budget ";
    text += format_duration(clock_.budget_s());
    text += ")";
  }
  return text;
}

void ProgressLine::step(std::size_t done, std::string_view what, double step_s) {
  std::fprintf(out_, "%s\n", line(done, what, step_s).c_str());
  std::fflush(out_);
  last_print_ = clock_.elapsed_s();
}

void ProgressLine::step_every(double interval_s, std::size_t done, std::string_view what, double step_s) {
  if (done >= total_ || clock_.elapsed_s() - last_print_ >= interval_s) step(done, what, step_s);
}

std::string budget_stop_line(std::string_view tool, const BudgetClock& clock, std::size_t left,
                             std::size_t total, std::string_view unit, std::string_view hint) {
  std::string text(tool);
  text += ": stopped by --budget-s ";
  text += format_duration(clock.budget_s());
  text += " after ";
  text += format_duration(clock.elapsed_s());
  text += ": ";
  text += std::to_string(left);
  text += " of ";
  text += std::to_string(total);
  text += " ";
  text += unit;
  text += " left";
  if (!hint.empty()) {
    text += " (";
    text += hint;
    text += ")";
  }
  return text;
}

}  // namespace pao::cuda::tools

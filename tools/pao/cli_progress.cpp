// The progress display of `pao golden` (cli_progress.hpp).
#include "cli_progress.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cmath>

namespace pao::cli {

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

Progress::Progress(std::size_t total_cases, double total_cost, bool terminal, std::FILE* out)
    : total_(total_cases),
      total_cost_(total_cost),
      terminal_(terminal),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  if (!terminal_) return;
  ticker_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      draw_locked();
      wake_.wait_for(lock, std::chrono::seconds(1));
    }
  });
}

Progress::~Progress() { finish(); }

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::eta_locked() const {
  // Rate from the cases generated so far (skipped ones cost nothing), applied to the cost left.
  const double remaining = total_cost_ - done_cost_ - skipped_cost_;
  if (done_cost_ <= 0 || remaining <= 0) return finished_ == total_ ? "0:00" : "--:--";
  return format_duration(elapsed() * remaining / done_cost_);
}

void Progress::draw_locked() {
  if (!terminal_) return;
  constexpr int kWidth = 24;
  const double fraction = total_ ? static_cast<double>(finished_) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::string running;
  if (!running_.empty()) {
    running = "  ";
    running += *running_.begin();
    if (running_.size() > 1) {
      running += " +";
      running += std::to_string(running_.size() - 1);
    }
  }
  char line[512];
  std::snprintf(line, sizeof line, "[%s] %zu/%zu %3.0f%%  %s elapsed  ETA %s%s", bar.c_str(), finished_,
                total_, 100 * fraction, format_duration(elapsed()).c_str(), eta_locked().c_str(),
                running.c_str());
  // One terminal row: a wrapped line would not be erased by the next redraw.
  winsize ws{};
  const std::size_t columns = ::ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 100;
  std::string text(line);
  if (text.size() >= columns) text.resize(columns - 1);
  std::fprintf(out_, "\r\x1b[K%s", text.c_str());
  std::fflush(out_);
}

void Progress::on_event(const golden::GoldenEvent& e) {
  std::lock_guard lock(mutex_);
  using Kind = golden::GoldenEvent::Kind;
  const std::string& id = e.golden_case->id;
  if (e.kind == Kind::started) {
    running_.insert(id);
    draw_locked();
    return;
  }
  running_.erase(id);
  ++finished_;
  if (e.kind == Kind::skipped) {
    skipped_cost_ += e.cost;
  } else {
    done_cost_ += e.cost;
  }
  if (terminal_) {
    if (e.kind == Kind::failed) std::fprintf(out_, "\r\x1b[KFAILED %s: %s\n", id.c_str(), e.message.c_str());
    draw_locked();
    return;
  }
  switch (e.kind) {
    case Kind::written:
      std::fprintf(out_, "[%zu/%zu] wrote %s (%s, %.2f s) ETA %s\n", finished_, total_, id.c_str(),
                   format_bytes(static_cast<double>(e.bytes)).c_str(), e.seconds, eta_locked().c_str());
      break;
    case Kind::skipped:
      std::fprintf(out_, "[%zu/%zu] up to date %s\n", finished_, total_, id.c_str());
      break;
    case Kind::failed:
      std::fprintf(out_, "[%zu/%zu] FAILED %s: %s\n", finished_, total_, id.c_str(), e.message.c_str());
      break;
    case Kind::started:
      break;
  }
  std::fflush(out_);
}

void Progress::finish() {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
    if (terminal_) {
      draw_locked();
      std::fprintf(out_, "\n");
    }
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

}  // namespace pao::cli

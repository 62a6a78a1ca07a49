// Progress of `pao golden`: on a terminal, one bar redrawn in place (done/total, percent, elapsed,
// an ETA weighted by each case's estimated cost, the cases running now); otherwise one plain
// line per finished case, for logs and job runners.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "pao/core/memory.hpp"
#include "pao/golden/run.hpp"

namespace pao::cli {

class Progress {
 public:
  Progress(std::size_t total_cases, double total_cost, bool terminal, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void on_event(const golden::GoldenEvent& event);
  /// Stops the redraws and ends the bar's line.
  void finish();

 private:
  void draw_locked();
  std::string eta_locked() const;
  double elapsed() const;

  std::size_t total_ = 0, finished_ = 0;
  double total_cost_ = 0, done_cost_ = 0, skipped_cost_ = 0;
  bool terminal_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::set<std::string> running_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;  // redraws the bar every second on a terminal (elapsed time, ETA)
};

/// "0:07", "1:02:03"
std::string format_duration(double seconds);
using pao::format_bytes;  // "812 B", "3.4 MB", "1.2 GB" (pao/core/memory.hpp)

}  // namespace pao::cli

// Chrome/Perfetto trace (JSON "traceEvents") of a simulation: process "device" with a track of
// kernels and counter tracks for DRAM bandwidth and resident CTAs; one process per SM ("SM 3")
// whose threads are its CTA slots, with a slice per CTA carrying seq/head/partition and bytes.
// Open it at https://ui.perfetto.dev or chrome://tracing.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pao/sim/engine/engine.hpp"

namespace pao::sim {

class ChromeTraceWriter final : public TraceSink {
 public:
  /// Writes to `out`; keeps at most `max_cta_slices` CTA slices (the rest are counted, not written).
  ChromeTraceWriter(std::ostream& out, std::vector<std::string> launch_names,
                    std::int64_t max_cta_slices = 1000000);
  ~ChromeTraceWriter() override;

  void kernel(const KernelResult& kernel, std::int64_t num_sms, std::int64_t ctas_per_sm) override;
  void cta(std::size_t launch_index, std::int64_t sm, std::int64_t slot, double start_us, double end_us,
           const CtaWork& work) override;
  void counters(double t_us, double dram_gbps, std::int64_t resident_ctas) override;
  /// Closes the JSON; called by the destructor if not before.
  void finish();
  std::int64_t dropped_cta_slices() const { return dropped_; }
  /// After `sample` CTA slices (or at finish, if fewer), calls `report` once with the trace's
  /// size extrapolated from the bytes written so far to `expected_slices` (capped at the slices
  /// kept): a measured estimate, whatever the kernels' names and timestamps make a slice weigh.
  void estimate_size(std::int64_t sample, std::int64_t expected_slices, std::function<void(double)> report);

 private:
  void begin_event();
  std::ostream& out_;
  std::vector<std::string> launch_names_;
  std::int64_t max_cta_slices_;
  std::int64_t written_ = 0;
  std::int64_t dropped_ = 0;
  bool first_ = true;
  bool finished_ = false;
  std::set<std::int64_t> named_sms_;
  std::set<std::pair<std::int64_t, std::int64_t>> named_slots_;
  std::int64_t estimate_sample_ = 0, estimate_slices_ = 0;
  std::function<void(double)> estimate_report_;
  void report_estimate();
};

}  // namespace pao::sim

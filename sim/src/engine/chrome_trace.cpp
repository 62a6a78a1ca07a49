// Chrome/Perfetto trace writer: streams one JSON event per line.
#include "pao/sim/engine/chrome_trace.hpp"

#include <algorithm>
#include <cstdio>

namespace pao::sim {
namespace {

// Escapes a kernel name for a JSON string (names are ours, but stay safe).
std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

constexpr std::int64_t kDevicePid = 0;
std::int64_t sm_pid(std::int64_t sm) { return sm + 1; }

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, std::vector<std::string> launch_names,
                                     std::int64_t max_cta_slices)
    : out_(out), launch_names_(std::move(launch_names)), max_cta_slices_(max_cta_slices) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  begin_event();
  out_ << R"({"ph":"M","name":"process_name","pid":0,"args":{"name":"device"}})";
  begin_event();
  out_ << R"({"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":-1}})";
  begin_event();
  out_ << R"({"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"kernels"}})";
  begin_event();
  out_ << R"({"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"launch latency / gaps"}})";
}

ChromeTraceWriter::~ChromeTraceWriter() { finish(); }

void ChromeTraceWriter::begin_event() {
  if (!first_) out_ << ",\n";
  first_ = false;
}

void ChromeTraceWriter::kernel(const KernelResult& k, std::int64_t /*num_sms*/, std::int64_t ctas_per_sm) {
  const double gap_start = k.end_us - k.time_us;
  if (k.start_us > gap_start) {
    begin_event();
    out_ << R"({"ph":"X","pid":0,"tid":1,"name":"wait )" << json_escape(k.name) << R"(","ts":)"
         << fmt(gap_start) << R"(,"dur":)" << fmt(k.start_us - gap_start) << "}";
  }
  begin_event();
  out_ << R"({"ph":"X","pid":0,"tid":0,"name":")" << json_escape(k.name) << R"(","ts":)" << fmt(k.start_us)
       << R"(,"dur":)" << fmt(k.busy_us) << R"(,"args":{"ctas":)" << k.ctas << R"(,"ctas_per_sm":)"
       << ctas_per_sm << R"(,"waves":)" << fmt(k.waves) << R"(,"achieved_gbps":)" << fmt(k.achieved_gbps)
       << R"(,"sm_utilisation":)" << fmt(k.sm_utilisation) << "}}";
}

void ChromeTraceWriter::cta(std::size_t launch_index, std::int64_t sm, std::int64_t slot, double start_us,
                            double end_us, const CtaWork& w) {
  if (written_ >= max_cta_slices_) {
    ++dropped_;
    return;
  }
  ++written_;
  if (estimate_report_ && written_ == estimate_sample_) report_estimate();
  if (named_sms_.insert(sm).second) {
    begin_event();
    out_ << R"({"ph":"M","name":"process_name","pid":)" << sm_pid(sm) << R"(,"args":{"name":"SM )" << sm
         << "\"}}";
    begin_event();
    out_ << R"({"ph":"M","name":"process_sort_index","pid":)" << sm_pid(sm) << R"(,"args":{"sort_index":)"
         << sm << "}}";
  }
  if (named_slots_.insert({sm, slot}).second) {
    begin_event();
    out_ << R"({"ph":"M","name":"thread_name","pid":)" << sm_pid(sm) << R"(,"tid":)" << slot
         << R"(,"args":{"name":"slot )" << slot << "\"}}";
  }
  const std::string kernel = launch_index < launch_names_.size() ? launch_names_[launch_index] : "kernel";
  begin_event();
  out_ << R"({"ph":"X","pid":)" << sm_pid(sm) << R"(,"tid":)" << slot << R"(,"name":")";
  if (w.seq >= 0) out_ << "s" << w.seq << " h" << w.head;
  if (w.partition >= 0) out_ << " p" << w.partition;
  if (w.seq < 0 && w.partition < 0) out_ << json_escape(kernel);
  out_ << R"(","cat":")" << json_escape(kernel) << R"(","ts":)" << fmt(start_us) << R"(,"dur":)"
       << fmt(end_us - start_us) << R"(,"args":{"seq":)" << w.seq << R"(,"head":)" << w.head
       << R"(,"partition":)" << w.partition << R"(,"bytes":)" << fmt(w.dram_bytes) << R"(,"flops":)"
       << fmt(w.flops) << R"(,"warp_instructions":)" << fmt(w.warp_instructions) << R"(,"iterations":)"
       << w.iterations << "}}";
}

void ChromeTraceWriter::counters(double t_us, double dram_gbps, std::int64_t resident) {
  begin_event();
  out_ << R"({"ph":"C","pid":0,"name":"DRAM bandwidth","ts":)" << fmt(t_us) << R"(,"args":{"GB/s":)"
       << fmt(dram_gbps) << "}}";
  begin_event();
  out_ << R"({"ph":"C","pid":0,"name":"resident CTAs","ts":)" << fmt(t_us) << R"(,"args":{"CTAs":)"
       << resident << "}}";
}

void ChromeTraceWriter::estimate_size(std::int64_t sample, std::int64_t expected_slices,
                                      std::function<void(double)> report) {
  estimate_sample_ = std::max<std::int64_t>(1, sample);
  estimate_slices_ = std::min(expected_slices, max_cta_slices_);
  estimate_report_ = std::move(report);
}

void ChromeTraceWriter::report_estimate() {
  const auto report = std::move(estimate_report_);
  estimate_report_ = nullptr;
  const auto bytes = static_cast<double>(out_.tellp());
  if (written_ > 0 && bytes > 0)
    report(bytes / static_cast<double>(written_) * static_cast<double>(estimate_slices_));
}

void ChromeTraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (estimate_report_) report_estimate();
  out_ << "\n],\"otherData\":{\"generator\":\"pao sim\",\"dropped_cta_slices\":" << dropped_ << "}}\n";
  out_.flush();
}

}  // namespace pao::sim

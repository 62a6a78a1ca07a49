#include "probe/probe_records.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace pao::cuda::probe {

std::vector<SmSpan> spans_by_sm(std::span<const CtaRecord> records) {
  struct Range {
    std::uint64_t first = UINT64_MAX, last = 0, work = 0;
    int ctas = 0;
  };
  std::map<std::uint32_t, Range> by_sm;
  for (const CtaRecord& r : records) {
    Range& g = by_sm[r.sm];
    g.first = std::min(g.first, r.start);
    g.last = std::max(g.last, r.end);
    g.work += r.work;
    ++g.ctas;
  }
  std::vector<SmSpan> spans;
  for (const auto& [sm, g] : by_sm)
    spans.push_back({sm, g.last > g.first ? g.last - g.first : 0, g.work, g.ctas});
  return spans;
}

double device_rate_per_cycle(std::span<const SmSpan> spans) {
  double rate = 0;
  for (const SmSpan& s : spans)
    if (s.cycles > 0) rate += static_cast<double>(s.work) / static_cast<double>(s.cycles);
  return rate;
}

double median_sm_rate_per_cycle(std::span<const SmSpan> spans) {
  std::vector<double> rates;
  for (const SmSpan& s : spans)
    if (s.cycles > 0) rates.push_back(static_cast<double>(s.work) / static_cast<double>(s.cycles));
  if (rates.empty()) return 0;
  std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
  return rates[rates.size() / 2];
}

int peak_concurrent_ctas(std::span<const CtaRecord> records) {
  // Per SM, a sweep over the interval ends: +1 at a start, -1 at an end; an end at the same cycle
  // as a start comes first (the slot was free).
  std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, int>>> events;
  for (const CtaRecord& r : records) {
    events[r.sm].emplace_back(r.start, +1);
    events[r.sm].emplace_back(r.end, -1);
  }
  int peak = 0;
  for (auto& [sm, e] : events) {
    std::sort(e.begin(), e.end());
    int running = 0;
    for (const auto& [cycle, step] : e) peak = std::max(peak, running += step);
  }
  return peak;
}

}  // namespace pao::cuda::probe

// What a probe kernel reports, and what the host makes of it. Every probe kernel writes one
// CtaRecord per CTA — the SM it ran on (%smid), its first and last clock reading, and the work it
// did (bytes read, instructions issued) — instead of timing itself with atomics. The host then
// reads rates per SM: an SM's clock is its own (SMs' counters are not synchronised on a real GPU),
// so a span is only ever taken between readings of one SM, and the device's rate is the sum of its
// SMs' rates. Plain C++: the CPU tests cover it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pao::cuda::probe {

struct CtaRecord {
  std::uint32_t sm = 0;
  std::uint32_t unused = 0;
  std::uint64_t start = 0;  // clock cycles of the CTA's SM, read when the CTA began its work
  std::uint64_t end = 0;    // and when it ended it
  std::uint64_t work = 0;   // bytes, instructions, iterations: what the rate counts
};

/// What one SM did in a launch: from its earliest CTA start to its latest CTA end.
struct SmSpan {
  std::uint32_t sm = 0;
  std::uint64_t cycles = 0;
  std::uint64_t work = 0;
  int ctas = 0;
};

/// The records grouped by SM (ascending SM id); SMs that ran no CTA are absent.
std::vector<SmSpan> spans_by_sm(std::span<const CtaRecord> records);

/// Work per cycle of the whole device: the sum over SMs of work / span (SMs that ran at once).
/// 0 when no SM has a span.
double device_rate_per_cycle(std::span<const SmSpan> spans);

/// Work per cycle of the median SM.
double median_sm_rate_per_cycle(std::span<const SmSpan> spans);

/// The most CTAs that were running at once on any one SM: overlapping [start, end) intervals of the
/// records of the same SM.
int peak_concurrent_ctas(std::span<const CtaRecord> records);

}  // namespace pao::cuda::probe

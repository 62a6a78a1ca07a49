// Synthetic launches and devices for the simulator's limit tests: a grid of identical CTAs, and a
// device whose per-CTA overhead, iteration latency and in-order floor are zero (so only bandwidth and issue
// bind).
#pragma once

#include <cstdint>
#include <string>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/launch.hpp"

namespace pao::test {

/// A launch of `n` CTAs, each doing `work`, with `threads` threads, 32 registers, no shared memory.
inline sim::Launch uniform_grid(std::int64_t n, const sim::CtaWork& work, std::int64_t threads = 128) {
  sim::Launch l;
  l.name = "grid";
  l.resources = {threads, 32, 0};
  l.ctas.assign(static_cast<std::size_t>(n), work);
  return l;
}

/// A shipped descriptor with `num_sms` SMs and no per-CTA overhead, iteration latency or in-order
/// floor per warp.
inline sim::Device device_without_overheads(const std::string& name, std::int64_t num_sms) {
  sim::Device d = sim::load_device(name);
  sim::set_device_field(d, "num_sms", static_cast<double>(num_sms), "assumed", "test");
  sim::set_device_field(d, "cta_dispatch_overhead_us", 0, "assumed", "test");
  sim::set_device_field(d, "iteration_latency_us", 0, "assumed", "test");
  sim::set_device_field(d, "cycles_per_warp_instruction", 0, "assumed", "test");
  return d;
}

}  // namespace pao::test

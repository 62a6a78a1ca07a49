// The event-driven engine: times launches on a device at CTA granularity.
//
// Launches in one stream run one after another. A launch issued by the host at time h starts at
//   start = max(h + launch_latency, previous_end + inter_kernel_gap)     (first: h + launch_latency)
// and its CTAs are handed to SMs in grid order: the first wave round-robin over the SMs up to the
// occupancy, then each freed slot takes the next CTA. A CTA spends `cta_dispatch_overhead` holding
// its slot, then streams its DRAM bytes at a rate r_i, piecewise constant between events:
//   r_i = min(u_i, lambda_s)            u_i = B_i * min(1 / l_i, 1 / (k_s * c_i))
// l_i = cta_latency_us: the CTA's latency floor, n_i * iteration_latency (its dependent loads)
// plus its busiest warp's instructions in program order (each cycles_per_warp_instruction).
// c_i = cta_compute_us: the CTA's FLOPs at the SM's arithmetic rate or its warp instructions at the
// SM's issue rate, whichever takes longer.
// lambda_s: the max-min fair level of SM s, the largest level with sum_i min(u_i, lambda_s) <= the
// per-SM cap, and with sum over all SMs <= the global cap (achievable DRAM bandwidth, and L2
// bandwidth / logical_per_dram_byte). k_s: CTAs sharing SM s's arithmetic. Between events, CTAs at
// their SM's level advance along a per-SM integral of lambda_s and capped CTAs have fixed finish
// times, so an event costs O(num_sms + CTAs on the event's SM), not O(running CTAs).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/launch.hpp"
#include "pao/sim/model/occupancy.hpp"

namespace pao::sim {

struct KernelResult {
  std::string name;
  std::int64_t ctas = 0;
  Occupancy occupancy;
  double waves = 0;                     // ctas / (ctas_per_sm * num_sms)
  std::int64_t full_waves = 0;          // ceil(waves)
  double issue_us = 0;                  // host issued the launch
  double start_us = 0;                  // first CTA dispatched
  double end_us = 0;                    // last CTA finished
  double time_us = 0;                   // end_us - previous kernel's end_us (latency and gap included)
  double busy_us = 0;                   // end_us - start_us
  double dram_bytes = 0;                // bytes the engine moved (the integral of the bandwidth)
  double achieved_gbps = 0;             // dram_bytes / busy_us
  double sm_utilisation = 0;            // SM-time with >= 1 resident CTA / (num_sms * busy_us)
  double warp_instructions = 0;         // the CTAs' warp instructions (instruction_model.hpp), all of them
  double issue_utilisation = 0;         // warp instructions / (num_sms * per_sm_issue_rate * busy_us)
  double mean_occupancy = 0;            // mean resident CTAs per SM / ctas_per_sm
  std::int64_t max_cta_iterations = 0;  // the most dependent load round trips of one CTA
  std::int64_t events = 0;              // engine events (dispatches, phase changes, completions)
};

struct SimResult {
  bool ok = true;  // false: some kernel does not fit on the device (see error)
  std::string error;
  double time_us = 0;  // end of the last kernel, from the first launch's issue
  double dram_bytes = 0;
  std::int64_t events = 0;
  std::vector<KernelResult> kernels;
};

/// Receives the timeline as it is simulated (e.g. the Chrome trace writer).
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void kernel(const KernelResult& kernel, std::int64_t num_sms, std::int64_t ctas_per_sm) = 0;
  virtual void cta(std::size_t launch_index, std::int64_t sm, std::int64_t slot, double start_us,
                   double end_us, const CtaWork& work) = 0;
  /// Device-wide DRAM bandwidth and resident CTAs, from `t_us` until the next sample.
  virtual void counters(double t_us, double dram_gbps, std::int64_t resident_ctas) = 0;
};

/// Microseconds the CTA's arithmetic and instruction issue take alone on one SM: the larger of its
/// FLOPs at the launch's arithmetic units (per_sm_fp32/fp16_flops) and its warp instructions at the
/// SM's issue rate (per_sm_issue_rate). 0 for a CTA with neither.
double cta_compute_us(const Device& device, const Launch& launch, const CtaWork& work);

/// Microseconds the CTA takes at least, however few CTAs share its SM: its dependent iterations
/// at iteration_latency_us plus its busiest warp's instructions one after another
/// (busiest_warp_instructions, at the launch's cycles_per_warp_instruction or else the device's).
double cta_latency_us(const Device& device, const Launch& launch, const CtaWork& work);

SimResult simulate(const Device& device, std::span<const Launch> launches, TraceSink* trace = nullptr);

}  // namespace pao::sim

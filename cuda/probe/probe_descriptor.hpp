// From what pao-cuda-probe measured to a device descriptor `pao sim --device` takes as it is
// (sim/include/pao/sim/model/device.hpp): each field measured by a probe says `measured` and the
// probe that measured it; what the driver reports says `datasheet` with the attribute; what the
// compute capability fixes says `datasheet` with the table; a field no stage of this run measured
// keeps the base descriptor's value and provenance. Plain C++: the CPU tests cover it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "probe/probe_kernels.hpp"  // DriverFacts

namespace pao::cuda::probe {

/// One point of the DRAM curve: read bandwidth of the whole device with this many bytes of loads
/// in flight per SM.
struct BandwidthPoint {
  double bytes_in_flight_per_sm = 0;
  double gbps = 0;
};

/// What the stages of one run measured; a stage that did not run leaves its values empty.
struct Measurements {
  std::optional<double> clock_ghz;                   // SM clock: cycles of a spin kernel / its event time
  std::optional<int> peak_ctas_per_sm;               // most CTAs of 32 threads resident at once on one SM
  std::optional<int> peak_threads_per_sm;            // most threads resident at once (CTAs of 1024 x peak)
  std::optional<double> dependent_fma_cycles;        // cycles between dependent FMAs of one warp
  std::optional<double> fma_per_cycle_per_sm;        // lane FMAs per cycle of one SM, many warps
  std::optional<double> mma_flops_per_cycle_per_sm;  // tensor-core f16 flops per cycle of one SM
  std::optional<double> issue_mix_ipc_per_sm;        // warp instructions per cycle of one SM, the decode mix
  std::vector<BandwidthPoint> dram_curve;            // by bytes in flight per SM, ascending
  std::optional<double> one_sm_gbps;                 // one CTA of 1024 threads, 128 KiB in flight, alone
  std::optional<double> l2_gbps;                     // the whole device reading an L2-resident region
  std::optional<double> dram_latency_cycles;         // pointer chase, cold lines
  std::optional<double> l2_latency_cycles;           // pointer chase, lines in L2
  std::optional<double> iteration_cycles;            // block-table entry, then the K line it names
  std::optional<double> launch_and_sync_us;          // host: launch an empty kernel and synchronise
  std::optional<double> kernel_gap_us;               // back-to-back empty kernels, per kernel
  std::optional<double> cta_dispatch_us;             // per CTA per SM, empty CTAs
};

/// The descriptor: `base` with every field this run measured or the driver reported replaced.
/// `command` is the probe's command line (the sources name it); `when` the date of the run.
/// Throws pao::Error when the result breaks a descriptor rule (validate_device).
sim::Device probe_descriptor(const sim::Device& base, const DriverFacts& facts, const Measurements& m,
                             const std::string& name, const std::string& command, const std::string& when);

/// The SM clock in GHz the run converts cycles with: measured, else the driver's, else the base's.
double clock_ghz_of(const sim::Device& base, const DriverFacts& facts, const Measurements& m);

/// "1 KiB 212 GB/s, 2 KiB 410 GB/s, ..." (the curve as a descriptor source quotes it).
std::string describe_curve(const std::vector<BandwidthPoint>& curve);

}  // namespace pao::cuda::probe

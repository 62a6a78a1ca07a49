#include "probe/probe_descriptor.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace pao::cuda::probe {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string kib(double bytes) {
  return bytes >= 1024 * 1024 ? fixed(bytes / (1024 * 1024), 0) + " MiB" : fixed(bytes / 1024, 0) + " KiB";
}

/// Sets fields of one descriptor, each source naming the probe's command line.
class Writer {
 public:
  Writer(sim::Device& d, std::string command) : d_(d), command_(std::move(command)) {}
  void measured(std::string_view key, double value, const std::string& how) {
    sim::store_device_field(d_, key, value, "measured", how + "; measured by `" + command_ + "`");
  }
  /// As measured(), when the run measured it.
  void measured(std::string_view key, const std::optional<double>& value, const std::string& how) {
    if (value) measured(key, *value, how);
  }
  void reported(std::string_view key, double value, const std::string& attribute) {
    sim::store_device_field(d_, key, value, "datasheet",
                            "reported by the CUDA driver (" + attribute + ") to `" + command_ + "`");
  }
  void table(std::string_view key, double value, const std::string& why) {
    sim::store_device_field(d_, key, value, "datasheet", why);
  }

 private:
  sim::Device& d_;
  std::string command_;
};

std::string cc_name(const DriverFacts& f) {
  return std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor);
}

}  // namespace

std::string describe_curve(const std::vector<BandwidthPoint>& curve) {
  std::string s;
  for (const auto& p : curve)
    s += (s.empty() ? "" : ", ") + kib(p.bytes_in_flight_per_sm) + " " + fixed(p.gbps, 0) + " GB/s";
  return s;
}

double clock_ghz_of(const sim::Device& base, const DriverFacts& facts, const Measurements& m) {
  if (m.clock_ghz) return *m.clock_ghz;
  if (facts.clock_khz > 0) return facts.clock_khz / 1e6;
  return base.clock_ghz;
}

sim::Device probe_descriptor(const sim::Device& base, const DriverFacts& f, const Measurements& m,
                             const std::string& name, const std::string& command, const std::string& when) {
  sim::Device d = base;
  d.name = name;
  Writer w(d, command);
  const double ghz = clock_ghz_of(base, f, m);
  const double cycle_us = 1e-3 / ghz;  // microseconds per cycle
  const std::string clock_note = m.clock_ghz ? "at the measured clock" : "at the driver's clock";

  // What the driver reports.
  w.reported("num_sms", f.num_sms, "cudaDevAttrMultiProcessorCount");
  w.reported("warp_size", f.warp_size, "cudaDevAttrWarpSize");
  w.reported("max_threads_per_cta", f.max_threads_per_cta, "cudaDevAttrMaxThreadsPerBlock");
  w.reported("registers_per_sm", f.registers_per_sm, "cudaDevAttrMaxRegistersPerMultiprocessor");
  w.reported("shared_per_sm_bytes", f.shared_per_sm_bytes, "cudaDevAttrMaxSharedMemoryPerMultiprocessor");
  w.reported("max_shared_per_cta_bytes", f.max_shared_per_cta_bytes,
             "cudaDevAttrMaxSharedMemoryPerBlockOptin");
  w.reported("l2_size_bytes", f.l2_size_bytes, "cudaDevAttrL2CacheSize");
  if (f.shared_reserved_per_cta_bytes >= 0)
    w.reported("shared_reserved_per_cta_bytes", f.shared_reserved_per_cta_bytes,
               "cudaDevAttrReservedSharedMemoryPerBlock");
  if (f.memory_clock_khz > 0 && f.memory_bus_bits > 0)
    w.reported("dram_peak_gbps", 2.0 * f.memory_clock_khz * 1e3 * (f.memory_bus_bits / 8.0) / 1e9,
               "cudaDevAttrMemoryClockRate " + std::to_string(f.memory_clock_khz) + " kHz x " +
                   "cudaDevAttrGlobalMemoryBusWidth " + std::to_string(f.memory_bus_bits) +
                   " bits x 2 (DDR)");
  // What the compute capability fixes (CUDA C Programming Guide, technical specifications; the
  // occupancy calculator's allocation units).
  const std::string guide = "CUDA C Programming Guide, compute capability " + cc_name(f);
  w.table("schedulers_per_sm", 4, guide + ": 4 warp schedulers per SM (5.0 and later)");
  w.table("max_registers_per_thread", 255, guide + ": 255 registers per thread");
  w.table("register_alloc_unit", 256,
          "CUDA occupancy calculator, compute capability " + cc_name(f) + ": 256 per warp");
  w.table("shared_alloc_unit_bytes", f.cc_major >= 8 ? 128 : 256,
          "CUDA occupancy calculator, compute capability " + cc_name(f));

  // Measured.
  if (m.clock_ghz)
    w.measured("clock_ghz", *m.clock_ghz, "clock64 cycles of a spin kernel / its CUDA-event time");
  else if (f.clock_khz > 0)
    w.reported("clock_ghz", f.clock_khz / 1e6, "cudaDevAttrClockRate");
  if (m.peak_ctas_per_sm)
    w.measured("max_ctas_per_sm", *m.peak_ctas_per_sm,
               "most CTAs of 32 threads resident at once on one SM (their %smid and clock spans); the "
               "driver says " +
                   std::to_string(f.max_ctas_per_sm));
  else
    w.reported("max_ctas_per_sm", f.max_ctas_per_sm, "cudaDevAttrMaxBlocksPerMultiprocessor");
  const double threads = m.peak_threads_per_sm ? *m.peak_threads_per_sm : f.max_threads_per_sm;
  if (m.peak_threads_per_sm)
    w.measured("max_threads_per_sm", threads,
               "most threads resident at once on one SM, CTAs of 1024; the driver says " +
                   std::to_string(f.max_threads_per_sm));
  else
    w.reported("max_threads_per_sm", threads, "cudaDevAttrMaxThreadsPerMultiProcessor");
  w.table("max_warps_per_sm", threads / f.warp_size, "max_threads_per_sm / warp_size");
  if (m.dependent_fma_cycles)
    w.measured("cycles_per_warp_instruction", *m.dependent_fma_cycles,
               "one warp, a chain of dependent fp32 FMAs (inline PTX): cycles per FMA");
  if (m.fma_per_cycle_per_sm)
    w.measured("fp32_tflops", *m.fma_per_cycle_per_sm * 2 * ghz * 1e9 * f.num_sms / 1e12,
               "lane FMAs per cycle of one SM (" + fixed(*m.fma_per_cycle_per_sm, 1) +
                   ", 8 independent chains per thread) x 2 flops x the SMs, " + clock_note);
  if (m.mma_flops_per_cycle_per_sm)
    w.measured("fp16_tflops", *m.mma_flops_per_cycle_per_sm * ghz * 1e9 * f.num_sms / 1e12,
               "wmma 16x16x16 f16 -> f32 flops per cycle of one SM (" +
                   fixed(*m.mma_flops_per_cycle_per_sm, 0) + ") x the SMs, " + clock_note);
  if (m.issue_mix_ipc_per_sm)
    w.measured(
        "issue_efficiency", std::min(1.0, *m.issue_mix_ipc_per_sm / 4),
        "the decode inner loop's instruction mix (16-byte load, 8 f16->f32, 8 FMA, 2 shuffles, max, 2 "
        "address ops) at " +
            fixed(*m.issue_mix_ipc_per_sm, 2) +
            " warp instructions per cycle per SM, over the 4 schedulers (counted from the probe's PTX)");
  if (!m.dram_curve.empty()) {
    const auto best = std::max_element(m.dram_curve.begin(), m.dram_curve.end(),
                                       [](const auto& a, const auto& b) { return a.gbps < b.gbps; });
    w.measured("dram_achievable_gbps", best->gbps,
               "the highest read bandwidth of the curve by bytes in flight per SM (" +
                   describe_curve(m.dram_curve) + ")");
  }
  w.measured("sm_bandwidth_cap_gbps", m.one_sm_gbps,
             "one CTA of 1024 threads alone on the device, 128 KiB of loads in flight, reading cold lines");
  w.measured("l2_bandwidth_gbps", m.l2_gbps, "every SM reading a region of a quarter of L2, again and again");
  if (m.iteration_cycles)
    w.measured("iteration_latency_us", *m.iteration_cycles * cycle_us,
               "one thread: a block-table entry, then the cold K line it names, each step depending on the "
               "last (" +
                   fixed(*m.iteration_cycles, 0) + " cycles, " + clock_note +
                   "; an idle device, so a floor: under load the round trip is longer)");
  w.measured("launch_latency_us", m.launch_and_sync_us,
             "host clock: an empty kernel's launch call and the synchronisation after it, median");
  w.measured("inter_kernel_gap_us", m.kernel_gap_us,
             "CUDA events around empty one-CTA kernels launched back to back, per kernel");
  w.measured(
      "cta_dispatch_overhead_us", m.cta_dispatch_us,
      "CUDA events: empty kernels of 64 CTAs per SM against 1, the difference per CTA per SM (dispatch "
      "only: the decode CTA's prologue and epilogue are not in it)");

  std::string kept;
  for (const auto& key : sim::device_field_keys()) {
    const auto& p = d.provenance.at(key);
    const auto& q = base.provenance.at(key);
    if (p.confidence == q.confidence && p.source == q.source) kept += (kept.empty() ? "" : ", ") + key;
  }
  d.description =
      f.name + " (compute capability " + cc_name(f) + ", " + std::to_string(f.num_sms) +
      " SMs) measured by pao-cuda-probe on " + when + ": `" + command + "`." +
      (kept.empty() ? "" : " Not measured in this run, kept from '" + base.name + "': " + kept + ".");
  sim::validate_device(d);
  return d;
}

}  // namespace pao::cuda::probe

// The machine's own limits, measured in the same run as a benchmark: memory bandwidth (a
// STREAM-triad-like loop over arrays far larger than the caches), fp32 / fp64 FMA throughput
// (independent vectorisable fma chains on every thread), and the rate at which fp32 values can
// be rounded to f16 and back (what emulating f16 arithmetic costs on a CPU without it).
#pragma once

namespace pao::bench {

struct MachineLimits {
  double triad_gb_per_s = 0;  // bytes moved (2 reads + 1 write) / second
  double fp32_gflops = 0;     // 2 flops per fma
  double fp64_gflops = 0;
  double f16_roundings_per_s = 0;  // fp32 -> f16 -> fp32 round trips, all threads
  int threads = 1;
};

MachineLimits measure_machine_limits();

}  // namespace pao::bench

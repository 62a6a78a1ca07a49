// Sweeps: the cartesian product of workload, kernel and device axes, each point timed for every
// kernel; CSV output and crossover points along the first axis. Points run in parallel (OpenMP)
// and land in a fixed order, so the output does not depend on the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// One axis: `name=LIST`. LIST is `a,b,c`, `start:stop:xF` (geometric) or `start:stop:+S` (linear).
/// Names: workload num-seqs, num-heads, num-kv-heads, head-size, block-size, seq-len, query-len,
/// max-seq-len; kernel partition-size, threads, regs, block-m, block-n, fallback-tile; or any device
/// field (num_sms, dram_achievable_gbps, ...).
struct Axis {
  std::string name;
  std::vector<double> values;
  bool geometric = false;
};

Axis parse_axis(std::string_view spec);
/// The axis names that change the workload or kernel (device fields are the others).
const std::vector<std::string>& workload_axis_names();

struct SweepPoint {
  std::vector<double> axis_values;  // one per axis
  std::size_t kernel = 0;           // index into SweepSpec::kernels
  bool ok = false;                  // false: does not fit (error says why) or bad combination
  std::string error;
  double time_us = 0;
  std::int64_t ctas = 0;  // of the first launch
  double waves = 0;       // of the first launch
  std::int64_t launches = 0;
  double dram_bytes = 0;
  double achieved_gbps = 0;  // dram_bytes / time_us
};

struct SweepSpec {
  Device device;
  Workload base;
  std::vector<KernelConfig> kernels;
  std::vector<Axis> axes;
  int threads = 0;  // 0: OpenMP's default
};

/// Applies axis values to a workload, kernel and device (in the precedence num-seqs, then lengths).
void apply_axes(const std::vector<Axis>& axes, const std::vector<double>& values, Workload& workload,
                KernelConfig& kernel, Device& device);

/// All points, ordered by axis values (first axis fastest) then kernel.
std::vector<SweepPoint> run_sweep(const SweepSpec& spec);

std::string sweep_csv(const SweepSpec& spec, const std::vector<SweepPoint>& points);

struct Crossover {
  std::vector<double> other_values;  // values of axes 1.. at which this crossover happens
  std::size_t a = 0, b = 0;          // kernels
  double at = 0;                     // first-axis value where their times cross (interpolated)
  std::size_t faster_below = 0;      // a or b
  bool near_tie = false;             // within 2% on both sides and one point on: not a trend
};

/// Where pairs of kernels swap order along the first axis, per combination of the other axes.
std::vector<Crossover> find_crossovers(const SweepSpec& spec, const std::vector<SweepPoint>& points);

}  // namespace pao::sim

// Calibration: fit a descriptor's free parameters to measured kernel times by least squares, and
// report the error on held-out measurements.
//
// Measurement CSV (what the CUDA benchmark writes; '#' lines are comments; columns in any order):
//   required  kernel          v1 | v2 | v2:PARTITION | prefix | fallback
//             num_seqs, num_heads, head_size, seq_len, time_us
//   optional  num_kv_heads (= num_heads), block_size (16), query_len (1), partition_size (512),
//             max_seq_len (= seq_len), dtype (f16), kv_cache_dtype (auto),
//             timing: "gpu" (default: first kernel start to last kernel end, CUDA events around
//             back-to-back launches), "host" (includes the launch latency) or "loop" (vLLM's
//             benchmarks/kernels/benchmark_paged_attention.py: the op launched 100 times back to
//             back between two synchronisations, wall time / 100, over a pool of pool_blocks
//             blocks with random block tables: the blocks stay L2-warm when they fit, and every
//             iteration pays the gap to the next launch),
//             pool_blocks (loop: vLLM's NUM_BLOCKS, 1024 by default),
//             group (rows of one workload timed with different kernels; default: inferred from the
//             workload), source, source_date, gpu, device, assumed, stddev_us, repeats,
//             achieved_gbps, note (informational)
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

enum class Timing : std::uint8_t { gpu, host, loop };

struct Measurement {
  Workload workload;
  KernelConfig kernel;
  double time_us = 0;
  Timing timing = Timing::gpu;
  std::int32_t pool_blocks = 1024;  // loop timing: the benchmark's block pool
  std::size_t line = 0;             // in the CSV, for messages
  /// Rows measuring the same workload with different kernels share a group (for decisions and
  /// for the held-out split, which keeps groups whole).
  std::size_t group = 0;
  std::string group_name;  // the CSV's group column, or the workload's description
  std::string source;      // where the number was published (informational)
  std::string gpu;         // the gpu (or device) column: what the time was measured on
  bool host_timing() const { return timing == Timing::host; }
};

/// Bytes of K and V a loop-timed measurement's launches touch: the distinct blocks that random
/// block tables draw from a pool of pool_blocks (expected value), times a block's K and V.
double loop_working_set_bytes(const Measurement& m);

/// The fraction of a loop-timed measurement's K/V reads that hit in L2: min(1, l2_size_bytes /
/// working set) (a steady state of repeated launches over a pool larger than L2 keeps about that
/// share of it); 0 for gpu and host timings, which the model takes as cold.
double loop_l2_hit_fraction(const Device& device, const Measurement& m);
/// The bandwidth of a mix of L2 hits (at l2_bandwidth_gbps) and DRAM misses (at
/// dram_achievable_gbps): the harmonic blend, time per byte weighted by the hit fraction.
double loop_bandwidth_gbps(const Device& device, double hit_fraction);

/// Parses the CSV; throws pao::Error naming the line and column on bad input.
std::vector<Measurement> parse_measurements(const std::string& csv_text, const std::string& origin);
/// The file of a --measurements argument: the path as given when it exists; else, for a relative
/// path, the same file in pao's data folder ("data/measurements/x.csv" or "measurements/x.csv"
/// from any folder) or in data/measurements ("x.csv", "x"). Throws pao::Error naming where it looked.
std::filesystem::path find_measurements(const std::string& arg);
/// find_measurements, read and parsed.
std::vector<Measurement> load_measurements(const std::string& path);
/// Several files' rows in one list, each file's groups apart from the others'.
std::vector<Measurement> load_measurements(const std::vector<std::string>& paths);
/// How reports name the rows of `paths`: the paths joined by " + ".
std::string measurements_origin(const std::vector<std::string>& paths);

/// The simulated time comparable to a measurement: gpu, the launches' span; host, from the first
/// launch; loop, the span with the global bandwidth at loop_bandwidth_gbps(loop_l2_hit_fraction),
/// plus the gap to the next iteration's launch, and never less than the host's cost of issuing
/// one op (host_op_overhead_us).
double predict_time(const Device& device, const Measurement& m);

struct ErrorReport {
  std::size_t rows = 0;
  double mape = 0;               // mean |pred - meas| / meas
  double max_error = 0;          // max |pred - meas| / meas
  double spearman = 0;           // rank correlation of predicted and measured times
  std::size_t decisions = 0;     // groups with >= 2 kernels
  double decision_accuracy = 0;  // groups where the predicted fastest kernel is the measured one
  /// Over the groups with >= 2 kernels: the measured time of the kernel the model picks over the
  /// measured best, less 1 (group_regret): what following the model costs.
  double mean_regret = 0, max_regret = 0;
};

/// What following a model's pick costs in one group: the measured time of the row it predicts
/// fastest over the fastest measured row, less 1 (0 when it picks right). `rows` index `measured`
/// and `predicted`.
double group_regret(const std::vector<std::size_t>& rows, const std::vector<double>& measured,
                    const std::vector<double>& predicted);

ErrorReport evaluate(const Device& device, const std::vector<Measurement>& rows);

/// The error report of `predicted` times (one per row) against the rows' measured times.
ErrorReport error_report(const std::vector<Measurement>& rows, const std::vector<double>& predicted);

/// Spearman's rank correlation (ties get their mean rank).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

struct CalibrationOptions {
  std::vector<std::string> parameters = {"dram_achievable_gbps", "iteration_latency_us",
                                         "cta_dispatch_overhead_us", "inter_kernel_gap_us",
                                         "issue_efficiency"};
  double holdout_fraction = 0.25;  // of the groups; every k-th group, deterministic
  int max_iterations = 30;
  int threads = 0;
  /// Called after every Levenberg-Marquardt iteration: its number, the cost (sum of squared log
  /// errors on the training rows) and whether the step improved it. For progress output.
  std::function<void(int iteration, double cost, bool improved)> on_iteration;
};

struct CalibrationResult {
  Device calibrated;
  std::vector<std::string> parameters;
  std::vector<double> before, after;  // parameter values
  std::size_t train_rows = 0, test_rows = 0;
  ErrorReport train_before, train_after, test_before, test_after;
  int iterations = 0;
};

/// Fits `options.parameters` (log-space Levenberg-Marquardt on log(pred / meas)); adds
/// launch_latency_us when some rows use host timing. Fitted fields become `fitted` with the file,
/// the command and the held-out error as their source.
CalibrationResult calibrate(const Device& device, const std::vector<Measurement>& rows,
                            const CalibrationOptions& options, const std::string& origin);

/// The fit as JSON: parameters before and after, and the four error reports.
std::string calibration_json(const CalibrationResult& result, const Device& device);
/// An error report as a JSON object, its fields named as the struct's members.
nlohmann::ordered_json error_report_json(const ErrorReport& report);

/// Synthetic measurements from a device (for testing the pipeline, never as data): decode V1 and
/// V2-512/1024 over a grid of batch sizes and lengths, times multiplied by exp(noise * N(0,1))
/// from a fixed seed.
std::string synthesize_measurements_csv(const Device& truth, double noise, std::uint64_t seed);

}  // namespace pao::sim

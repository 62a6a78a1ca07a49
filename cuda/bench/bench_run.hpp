// The row loop of pao-cuda-bench, apart from the device so that the CPU tests drive it with fake
// timings: the measurement CSV appended and flushed row by row (a killed run keeps every row it
// measured), --resume skipping the rows the CSV already holds, each case built once for all the
// kernels timed on it, a progress line with an ETA per row on stderr, and --budget-s stopping
// between rows when the next one would not finish.
#pragma once

#include <cstddef>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "bench/bench_kernels.hpp"
#include "bench/measurement_csv.hpp"
#include "check/run_progress.hpp"
#include "pao/cases/case.hpp"
#include "pao/core/error.hpp"

namespace pao::cuda::bench {

/// The cells that identify a row of the measurement CSV, named by `header`: every column but the
/// measured ones (time_us, stddev_us, repeats, achieved_gbps), joined. Throws pao::Error when the
/// header lacks one of them or the cells do not match it.
std::string measurement_row_key(const std::vector<std::string>& header,
                                const std::vector<std::string>& cells);
/// The key of `row` as it reads back from the line measurement_csv_row writes.
std::string measurement_row_key(const MeasurementRow& row);

/// The measurement CSV of a run, written as the rows are measured: opened in append mode, the
/// comment and header written once when the file is new (or not resumed), every row flushed.
class MeasurementCsvFile {
 public:
  /// resume: keeps the rows `path` holds (its header must be pao's) and remembers their keys; a
  /// last line cut short by a kill is dropped. Otherwise the file starts anew. `comment` is the
  /// "# pao-cuda-bench on ..." line of a new file. Throws pao::Error when the file cannot be read
  /// or written.
  MeasurementCsvFile(const std::string& path, bool resume, const std::string& comment);
  ~MeasurementCsvFile();
  MeasurementCsvFile(const MeasurementCsvFile&) = delete;
  MeasurementCsvFile& operator=(const MeasurementCsvFile&) = delete;

  /// Whether the file held `row` (its key) when it was opened or has been appended since.
  bool has(const MeasurementRow& row) const { return keys_.count(measurement_row_key(row)) > 0; }
  /// Appends the row's line and flushes it to the file.
  void append(const MeasurementRow& row);
  /// Rows the file held when it was opened.
  std::size_t resumed_rows() const { return resumed_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::set<std::string> keys_;
  std::size_t resumed_ = 0;
};

/// A measurement of one kernel on one case.
struct BenchTiming {
  double time_us = 0, stddev_us = 0;
  int repeats = 0;
  double bytes = 0;  // the bytes the launch must move at least (decode_bytes_moved, prefix_bytes_moved)
};

/// What the row loop asks of the device (the GPU in pao-cuda-bench, a fake in the tests).
class BenchDevice {
 public:
  virtual ~BenchDevice() = default;
  /// Builds case `c` and puts it on the device: once for all the kernels timed on it.
  virtual void prepare(const cases::Case& c) = 0;
  /// Times kernel `k` on the prepared case; `kc` is the case as `k` runs it (case_for_kernel).
  /// Throws pao::Error when the kernel refuses the case.
  virtual BenchTiming measure(const cases::Case& kc, const BenchKernel& k) = 0;
  /// Frees the prepared case.
  virtual void release() = 0;
  /// Whether an error stops the run (a CUDA error: the context may be unusable) rather than
  /// skipping the row.
  virtual bool fatal(const Error& e) const = 0;
};

struct BenchRunOptions {
  std::string tool = "pao-cuda-bench";
  std::string device_name;     // the rows' device column
  double peak_gbps = 0;        // the table's "of peak"
  std::string timing = "gpu";  // "gpu" or "loop"
  double max_gib = 24;         // cases over this are skipped
};

struct BenchRunSummary {
  std::size_t rows = 0;      // rows the cases and kernels make
  std::size_t resumed = 0;   // of them already in the CSV (--resume): not measured again
  std::size_t measured = 0;  // appended by this run
  std::size_t refused = 0;   // a kernel or the case refused (a "skipped" line each)
  std::size_t left = 0;      // not measured because the budget ran out
  std::size_t builds = 0;    // cases built and put on the device (BenchDevice::prepare)
  bool stopped_by_budget = false;
};

/// The row of kernel `k` on `kc` (the case as `k` runs it) with `t`, as the CSV holds it.
MeasurementRow bench_row(const cases::Case& kc, const BenchKernel& k, const BenchTiming& t,
                         const BenchRunOptions& o);

/// Times every kernel of `kernels` that runs on each case, appending each row to `csv` as it is
/// measured; rows `csv` already has are skipped, cases over max_gib too. A line per row on `table`
/// (the results) and on `progress` (count, ETA). Stops between rows when `clock` does not allow the
/// next one (its estimate: the mean row time so far, plus the mean build time when the row starts a
/// case). Rethrows the errors device.fatal() calls fatal.
BenchRunSummary run_bench(const std::vector<cases::Case>& cases, const std::vector<BenchKernel>& kernels,
                          const BenchRunOptions& o, MeasurementCsvFile& csv, BenchDevice& device,
                          const tools::BudgetClock& clock, std::FILE* table, std::FILE* progress);

}  // namespace pao::cuda::bench

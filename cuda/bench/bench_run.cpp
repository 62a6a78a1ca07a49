// The row loop of pao-cuda-bench (bench/bench_run.hpp).
#include "bench/bench_run.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "pao/cases/case_tensors.hpp"
#include "pao/io/csv_read.hpp"

namespace pao::cuda::bench {

namespace {

/// Columns that hold what was measured, not which row it is.
bool measured_column(const std::string& name) {
  return name == "time_us" || name == "stddev_us" || name == "repeats" || name == "achieved_gbps";
}

std::vector<std::string> our_header() {
  return read_csv_records(measurement_csv_header(), "the measurement CSV header").front().cells;
}

}  // namespace

std::string measurement_row_key(const std::vector<std::string>& header,
                                const std::vector<std::string>& cells) {
  require(cells.size() == header.size(), "a row of ", cells.size(), " cells, the header has ", header.size());
  std::string key;
  for (const std::string& column : our_header()) {
    if (measured_column(column)) continue;
    const auto at = std::find(header.begin(), header.end(), column);
    require(at != header.end(), "the header has no column ", column);
    // The cells joined by a byte no cell holds after csv parsing of pao's rows.
    key += cells[static_cast<std::size_t>(at - header.begin())];
    key += '\x1f';
  }
  return key;
}

std::string measurement_row_key(const MeasurementRow& row) {
  static const std::vector<std::string> header = our_header();
  return measurement_row_key(header, read_csv_records(measurement_csv_row(row), "a row").front().cells);
}

MeasurementCsvFile::MeasurementCsvFile(const std::string& path, bool resume, const std::string& comment)
    : path_(path) {
  bool fresh = true;
  if (resume) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      std::string csv = text.str();
      // A line cut short by a kill: drop it, and the file with it (rewritten below).
      const bool cut = !csv.empty() && csv.back() != '\n';
      if (cut) {
        csv.erase(csv.find_last_of('\n') == std::string::npos ? 0 : csv.find_last_of('\n') + 1);
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << csv;
        require(static_cast<bool>(out), path, ": cannot write");
      }
      const std::vector<CsvRecord> records = read_csv_records(csv, path);
      if (!records.empty()) {
        const std::vector<std::string>& header = records.front().cells;
        require(header == our_header(), path, ": its header is not pao-cuda-bench's (",
                measurement_csv_header(), "); --resume appends only to a pao-cuda-bench CSV");
        for (std::size_t i = 1; i < records.size(); ++i) {
          try {
            keys_.insert(measurement_row_key(header, records[i].cells));
          } catch (const Error& e) {
            fail(path, ":", records[i].line, ": ", e.what());
          }
        }
        resumed_ = records.size() - 1;
        fresh = false;
      }
    }
  }
  file_ = std::fopen(path.c_str(), fresh ? "w" : "a");
  require(file_ != nullptr, path, ": cannot open for writing");
  if (fresh) {
    std::fprintf(file_, "# %s\n%s\n", comment.c_str(), measurement_csv_header().c_str());
    require(std::fflush(file_) == 0, path, ": cannot write");
  }
}

MeasurementCsvFile::~MeasurementCsvFile() {
  if (file_) std::fclose(file_);
}

void MeasurementCsvFile::append(const MeasurementRow& row) {
  const std::string line = measurement_csv_row(row) + "\n";
  require(std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0, path_,
          ": cannot write");
  keys_.insert(measurement_row_key(row));
}

MeasurementRow bench_row(const cases::Case& kc, const BenchKernel& k, const BenchTiming& t,
                         const BenchRunOptions& o) {
  MeasurementRow row;
  row.device = o.device_name;
  row.prefix = k.variant == KernelVariant::prefix;
  // `kc` is the case as the kernel runs it (case_for_kernel): V2's partition size is the case's.
  row.partition_size = k.variant == KernelVariant::v2 ? kc.partition_size : 0;
  row.block_m = kc.block_m, row.block_n = kc.block_n;
  row.query_len = kc.query_lens.empty() ? 1 : kc.query_lens.front();
  static_cast<LaunchShape&>(row) = kc;
  row.dtype = kc.dtype;
  row.kv_cache_dtype = kc.cache_storage_dtype();
  row.seq_len = kc.seq_lens.front();
  row.max_seq_len = kc.max_seq_len;
  row.time_us = t.time_us, row.stddev_us = t.stddev_us, row.repeats = t.repeats;
  row.timing = o.timing;
  row.pool_blocks = o.timing == "loop" ? cases::pool_num_blocks(kc) : 0;
  row.achieved_gbps = t.time_us > 0 ? t.bytes / t.time_us / 1e3 : 0;
  row.note = kc.id;
  return row;
}

namespace {

struct PendingRow {
  BenchKernel kernel;
  cases::Case kc;
};

}  // namespace

BenchRunSummary run_bench(const std::vector<cases::Case>& cases, const std::vector<BenchKernel>& kernels,
                          const BenchRunOptions& o, MeasurementCsvFile& csv, BenchDevice& device,
                          const tools::BudgetClock& clock, std::FILE* table, std::FILE* progress) {
  BenchRunSummary sum;
  // The rows still to measure, case by case: the plan, before anything is built.
  std::vector<std::vector<PendingRow>> pending(cases.size());
  std::size_t to_measure = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const cases::Case& c = cases[i];
    const std::vector<BenchKernel> ks = kernels_of_case(kernels, c);
    sum.rows += ks.size();
    if (bench_case_gib(c) > o.max_gib) {
      std::fprintf(table, "skipped %s: %.1f GiB on the device > --max-gib %.1f\n", c.id.c_str(),
                   bench_case_gib(c), o.max_gib);
      sum.refused += ks.size();
      continue;
    }
    for (const BenchKernel& k : ks) {
      PendingRow row{k, {}};
      try {
        row.kc = case_for_kernel(c, k);
      } catch (const Error& e) {
        std::fprintf(table, "skipped %s %s: %s\n", c.id.c_str(), k.label.c_str(), e.what());
        ++sum.refused;
        continue;
      }
      if (csv.has(bench_row(row.kc, k, {}, o))) {
        ++sum.resumed;
        continue;
      }
      pending[i].push_back(std::move(row));
      ++to_measure;
    }
  }
  if (sum.resumed > 0)
    std::fprintf(progress, "%s: --resume: %zu of the %zu rows are in %s already; %zu to measure\n",
                 o.tool.c_str(), sum.resumed, sum.rows, csv.path().c_str(), to_measure);
  std::fflush(progress);

  tools::ProgressLine line(progress, o.tool, to_measure, clock);
  double row_s = 0, build_s = 0;  // totals, for the budget's estimates
  std::size_t done = 0;           // rows measured or refused
  for (std::size_t i = 0; i < cases.size() && !sum.stopped_by_budget; ++i) {
    if (pending[i].empty()) continue;  // nothing left to time: not built
    const cases::Case& c = cases[i];
    bool built = false;
    for (const PendingRow& r : pending[i]) {
      const double mean_row = sum.measured ? row_s / static_cast<double>(sum.measured) : 0;
      const double mean_build = sum.builds ? build_s / static_cast<double>(sum.builds) : 0;
      if (!clock.allows(mean_row + (built ? 0 : mean_build))) {
        sum.stopped_by_budget = true;
        break;
      }
      if (!built) {
        const double t0 = clock.elapsed_s();
        try {
          device.prepare(c);
        } catch (const Error& e) {
          if (device.fatal(e)) throw;
          std::fprintf(table, "skipped %s: %s\n", c.id.c_str(), e.what());
          sum.refused += pending[i].size();
          done += pending[i].size();
          break;
        }
        built = true;
        ++sum.builds;
        build_s += clock.elapsed_s() - t0;
      }
      const double t0 = clock.elapsed_s();
      BenchTiming t;
      try {
        t = device.measure(r.kc, r.kernel);
      } catch (const Error& e) {
        if (device.fatal(e)) throw;
        std::fprintf(table, "skipped %s %s: %s\n", c.id.c_str(), r.kernel.label.c_str(), e.what());
        ++sum.refused;
        ++done;
        continue;
      }
      const double took = clock.elapsed_s() - t0;
      const MeasurementRow row = bench_row(r.kc, r.kernel, t, o);
      csv.append(row);
      ++sum.measured;
      row_s += took;
      std::fprintf(table, "%-58s %-8s %10.2f %8.0f %6.1f%%\n", c.id.c_str(), r.kernel.label.c_str(),
                   t.time_us, row.achieved_gbps,
                   o.peak_gbps > 0 ? 100 * row.achieved_gbps / o.peak_gbps : 0.0);
      std::fflush(table);
      line.step(++done, c.id + " " + r.kernel.label, took);
    }
    if (built) device.release();
  }
  if (sum.stopped_by_budget) {
    sum.left = to_measure - done;
    const std::string stop =
        tools::budget_stop_line(o.tool, clock, sum.left, sum.rows, "rows", "--resume measures them");
    std::fprintf(table, "%s\n", stop.c_str());
    std::fprintf(progress, "%s\n", stop.c_str());
    std::fflush(table);
    std::fflush(progress);
  }
  return sum;
}

}  // namespace pao::cuda::bench

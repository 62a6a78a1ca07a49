// Calibration: the measurement CSV, error metrics, and the Levenberg-Marquardt fit.
#include "pao/sim/studies/calibrate.hpp"

#include <omp.h>

// GCC 12's AVX-512 intrinsics, which Eigen includes, warn about their own "undefined" vectors
// (GCC bug 105593, fixed in 13): silenced for Eigen's headers only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Dense>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>

#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/io/csv_read.hpp"
#include "pao/io/json_read.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/kernel_model.hpp"

namespace pao::sim {
namespace {

const std::vector<std::string>& known_columns() {
  static const std::vector<std::string> cols = {
      "kernel",      "num_seqs",      "num_heads",      "num_kv_heads", "head_size",   "block_size",
      "seq_len",     "query_len",     "partition_size", "max_seq_len",  "dtype",       "kv_cache_dtype",
      "time_us",     "timing",        "device",         "stddev_us",    "repeats",     "achieved_gbps",
      "note",        "gpu",           "group",          "source",       "source_date", "assumed",
      "pool_blocks", "implementation"};
  return cols;
}

double to_number(const std::string& text, const std::string& where) {
  char* end = nullptr;
  // A decimal number and nothing else: strtod alone would take hex ("0x10"), "infinity", and stop
  // at a NUL byte inside the cell.
  const bool decimal = text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  const double v = std::strtod(text.c_str(), &end);
  require(!text.empty() && decimal && end == text.c_str() + text.size() && std::isfinite(v), where, ": '",
          excerpt(text), "' is not a number");
  return v;
}

/// An integer cell in [lo, hi]; the message says which rule the text broke.
std::int32_t to_int(const std::string& text, const std::string& where, std::int32_t lo, std::int32_t hi) {
  const double v = to_number(text, where);
  require(std::floor(v) == v, where, ": '", excerpt(text), "' is not an integer");
  require(v >= lo && v <= hi, where, " = ", excerpt(text), ": out of range [", lo, ", ", hi, "]");
  return static_cast<std::int32_t>(v);
}

// The ranges of the integer columns: what a measured vLLM launch can have (int32 lengths, a batch of
// at most a million sequences), so that a typo is refused where it is rather than simulated.
constexpr std::int32_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kMaxSeqs = 1000000;
constexpr std::int32_t kMaxHeads = 65536;
constexpr std::int32_t kMaxHeadSize = 4096;
constexpr std::int32_t kMaxBlockSize = 65536;
// A measured time, in microseconds: from a nanosecond to a quarter of an hour. A subnormal or zero
// time would make every relative error infinite (MAPE inf%) and the fit's logarithms NaN.
constexpr double kMinTimeUs = 1e-3, kMaxTimeUs = 1e9;
// CTAs of one row's launches: calibrate simulates every row hundreds of times.
constexpr double kMaxRowCtas = 1e8;
// The K/V cache one measured launch reads: more than any GPU's memory (an H200 has 141 GB, a B200
// 192 GB) cannot have been measured.
constexpr double kMaxRowKvBytes = 1e12;

std::vector<std::size_t> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  return idx;
}

std::vector<double> predict_all(const Device& d, const std::vector<Measurement>& rows, int threads) {
  std::vector<double> out(rows.size());
  const auto n = static_cast<std::int64_t>(rows.size());
  // An exception must not leave the parallel region (it would terminate the process): each row's
  // is kept, and the first row's raised after it.
  std::vector<std::exception_ptr> errors(rows.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    try {
      out[k] = predict_time(d, rows[k]);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace

ErrorReport error_report(const std::vector<Measurement>& rows, const std::vector<double>& pred) {
  ErrorReport r;
  r.rows = rows.size();
  if (rows.empty()) return r;
  std::vector<double> meas;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double e = std::fabs(pred[i] - rows[i].time_us) / rows[i].time_us;
    r.mape += e;
    r.max_error = std::max(r.max_error, e);
    meas.push_back(rows[i].time_us);
  }
  r.mape /= static_cast<double>(rows.size());
  r.spearman = spearman(pred, meas);
  std::map<std::size_t, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i) groups[rows[i].group].push_back(i);
  std::size_t right = 0;
  for (const auto& [g, members] : groups) {
    if (members.size() < 2) continue;
    ++r.decisions;
    const double regret = group_regret(members, meas, pred);
    if (regret == 0) ++right;
    r.mean_regret += regret;
    r.max_regret = std::max(r.max_regret, regret);
  }
  if (r.decisions > 0) {
    r.decision_accuracy = static_cast<double>(right) / static_cast<double>(r.decisions);
    r.mean_regret /= static_cast<double>(r.decisions);
  }
  return r;
}

double group_regret(const std::vector<std::size_t>& rows, const std::vector<double>& measured,
                    const std::vector<double>& predicted) {
  std::size_t pick = rows.front(), best = rows.front();
  for (auto i : rows) {
    if (predicted[i] < predicted[pick]) pick = i;
    if (measured[i] < measured[best]) best = i;
  }
  return pick == best ? 0.0 : measured[pick] / measured[best] - 1;
}

namespace {

std::string workload_key(const Workload& w) {
  std::ostringstream os;
  os << w.to_string() << " max=" << w.effective_max_seq_len();
  return os.str();
}

/// Solves the small symmetric system A x = b (A positive definite after damping) by Gaussian
/// elimination with partial pivoting; P <= a handful of parameters.
}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n < 2 || b.size() != n) return 0;
  const auto rank_values = [](const std::vector<double>& v) {
    const auto order = ranks(v);
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
      const double mean_rank = 0.5 * static_cast<double>(i + j);
      for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
      i = j + 1;
    }
    return r;
  };
  const auto ra = rank_values(a), rb = rank_values(b);
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(n);
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(n);
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

std::vector<Measurement> parse_measurements(const std::string& text, const std::string& origin) {
  std::vector<std::string> header;
  std::vector<Measurement> rows;
  std::map<std::string, std::size_t> groups;
  for (const CsvRecord& record : read_csv_records(text, origin)) {
    const std::size_t line_no = record.line;
    const auto& cells = record.cells;
    if (header.empty()) {
      header = cells;
      for (const auto& h : header) {
        if (h.empty() && &h == &header.front()) continue;  // pandas' to_csv index: first, unnamed
        require(!h.empty(), origin, ":", line_no,
                ": a column without a name (only the first, the index "
                "pandas writes, may have none)");
        require(std::count(header.begin(), header.end(), h) == 1, origin, ":", line_no, ": column '",
                excerpt(h), "' is named twice");
        const auto& known = known_columns();
        require(std::find(known.begin(), known.end(), h) != known.end(), origin, ":", line_no,
                ": unknown column '", excerpt(h), "'");
      }
      for (const char* needed : {"kernel", "num_seqs", "num_heads", "head_size", "seq_len", "time_us"})
        require(std::find(header.begin(), header.end(), needed) != header.end(), origin, ":", line_no,
                ": missing required column '", needed, "'");
      continue;
    }
    require(cells.size() == header.size(), origin, ":", line_no, ": ", cells.size(),
            " cells, the header has ", header.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i)
      if (!header[i].empty()) row[header[i]] = cells[i];
    const auto get = [&](const std::string& key, const std::string& fallback) {
      const auto it = row.find(key);
      return it == row.end() || it->second.empty() ? fallback : it->second;
    };
    const auto where = [&](const std::string& col) {
      return origin + ":" + std::to_string(line_no) + ": " + col;
    };
    Measurement m;
    m.line = line_no;
    Workload& w = m.workload;
    w.num_seqs = to_int(get("num_seqs", ""), where("num_seqs"), 1, kMaxSeqs);
    w.num_heads = to_int(get("num_heads", ""), where("num_heads"), 1, kMaxHeads);
    w.num_kv_heads = to_int(get("num_kv_heads", get("num_heads", "")), where("num_kv_heads"), 1, kMaxHeads);
    w.head_size = to_int(get("head_size", ""), where("head_size"), 1, kMaxHeadSize);
    w.block_size = to_int(get("block_size", "16"), where("block_size"), 1, kMaxBlockSize);
    const std::int32_t seq_len = to_int(get("seq_len", ""), where("seq_len"), 0, kMaxInt32);
    const std::int32_t query_len = to_int(get("query_len", "1"), where("query_len"), 0, kMaxInt32);
    w.seq_lens.assign(static_cast<std::size_t>(w.num_seqs), seq_len);
    if (query_len != 1) w.query_lens.assign(w.seq_lens.size(), query_len);
    w.max_seq_len = to_int(get("max_seq_len", "0"), where("max_seq_len"), 0, kMaxInt32);
    w.dtype = parse_dtype(get("dtype", "f16"), where("dtype"));
    try {
      w.kv_cache_dtype = cases::parse_kv_cache_dtype(get("kv_cache_dtype", "auto")).value_or(w.dtype);
    } catch (const Error& e) {
      fail(where("kv_cache_dtype"), ": ", e.what());
    }
    KernelConfig defaults;
    const std::string vllm_partition = std::to_string(KernelTuning{}.partition_size);
    defaults.partition_size =
        to_int(get("partition_size", vllm_partition), where("partition_size"), 1, kMaxInt32);
    defaults.implementation =
        parse_kernel_implementation(get("implementation", "vllm"), where("implementation"));
    try {
      m.kernel = parse_kernel_spec(get("kernel", ""), defaults);
    } catch (const Error& e) {
      fail(where("kernel"), ": ", e.what());
    }
    const std::string time_text = get("time_us", "");
    m.time_us = to_number(time_text, where("time_us"));
    require(std::isnormal(m.time_us) && m.time_us >= kMinTimeUs && m.time_us <= kMaxTimeUs, where("time_us"),
            " = ", excerpt(time_text), ": must be a time in [", kMinTimeUs, ", ", kMaxTimeUs,
            "] microseconds");
    const std::string timing = get("timing", "gpu");
    require(timing == "gpu" || timing == "host" || timing == "loop", where("timing"), ": '", excerpt(timing),
            "' must be gpu, host or loop");
    m.timing = timing == "host" ? Timing::host : timing == "loop" ? Timing::loop : Timing::gpu;
    m.pool_blocks = to_int(get("pool_blocks", "1024"), where("pool_blocks"), 1, kMaxInt32);
    m.source = get("source", "");
    m.gpu = get("gpu", get("device", ""));
    try {
      validate_workload(w);
    } catch (const Error& e) {
      fail(origin, ":", line_no, ": ", e.what());
    }
    // Sized without building anything: the launches of a row are built at every step of a fit.
    double tokens = 0;
    for (const auto len : w.seq_lens) tokens += len;
    const double kv_bytes = tokens * 2 * w.num_kv_heads * w.head_size * kv_bytes_per_element(w);
    require(kv_bytes <= kMaxRowKvBytes, origin, ":", line_no, ": seq_len = ", seq_len,
            " x num_seqs = ", w.num_seqs, " tokens of ", w.num_kv_heads, " KV heads of ", w.head_size,
            " are ", format_bytes(kv_bytes), " of K/V cache, more than any GPU holds (",
            format_bytes(kMaxRowKvBytes), "): not a launch that was measured");
    const double ctas = estimated_ctas(w, m.kernel);
    require(ctas <= kMaxRowCtas, origin, ":", line_no, ": ", w.to_string(), " with ", m.kernel.label(),
            " is ", ctas, " CTAs, above the ", kMaxRowCtas,
            " a measurement row may simulate (check num_seqs, num_heads, seq_len)");
    require_memory(origin + ":" + std::to_string(line_no) + ": simulating " + w.to_string(),
                   estimated_simulation_bytes(w, m.kernel), "check num_seqs, num_heads and seq_len");
    m.group_name = get("group", workload_key(w) + " " + timing);
    m.group = groups.emplace(m.group_name, groups.size()).first->second;
    rows.push_back(std::move(m));
  }
  require(!header.empty(), origin, ": no header line");
  require(!rows.empty(), origin, ": no measurements");
  return rows;
}

std::filesystem::path find_measurements(const std::string& arg) {
  namespace fs = std::filesystem;
  const fs::path given(arg);
  if (fs::exists(given) || given.is_absolute()) return given;
  const fs::path data = data_dir();
  std::vector<fs::path> tried;
  auto rel = given;
  if (auto it = given.begin(); it != given.end() && *it == "data") {  // data/measurements/x.csv
    rel.clear();
    for (++it; it != given.end(); ++it) rel /= *it;
  }
  for (const fs::path& p :
       {data / rel, data / "measurements" / rel, data / "measurements" / (arg + ".csv")}) {
    if (fs::is_regular_file(p)) return p;
    tried.push_back(p);
  }
  std::string where;
  for (const auto& p : tried) where += ", " + p.string();
  fail("measurements ", arg, ": no such file (looked in the current folder", where, ")");
}

std::vector<Measurement> load_measurements(const std::string& arg) {
  const std::string path = find_measurements(arg).string();
  require(static_cast<bool>(std::ifstream(path, std::ios::binary)), path, ": cannot open measurements");
  return parse_measurements(read_text_file(path, path), path);
}

std::vector<Measurement> load_measurements(const std::vector<std::string>& paths) {
  std::vector<Measurement> all;
  for (const auto& path : paths) {
    std::size_t first_group = 0;  // this file's groups follow the earlier files'
    for (const auto& m : all) first_group = std::max(first_group, m.group + 1);
    for (auto m : load_measurements(path)) {
      m.group += first_group;
      all.push_back(std::move(m));
    }
  }
  return all;
}

std::string measurements_origin(const std::vector<std::string>& paths) {
  std::string origin;
  for (const auto& p : paths) origin += (origin.empty() ? "" : " + ") + p;
  return origin;
}

double loop_working_set_bytes(const Measurement& m) {
  const Workload& w = m.workload;
  double draws = 0;  // block-table entries the launches read
  for (const auto len : w.seq_lens) draws += std::ceil(static_cast<double>(len) / w.block_size);
  const double pool = m.pool_blocks;
  const double distinct = pool * -std::expm1(-draws / pool);  // drawn uniformly with replacement
  const double block_bytes =
      2.0 /*K, V*/ * w.block_size * w.num_kv_heads * w.head_size * kv_bytes_per_element(w);
  return distinct * block_bytes;
}

double loop_l2_hit_fraction(const Device& d, const Measurement& m) {
  if (m.timing != Timing::loop) return 0.0;
  const double working_set = loop_working_set_bytes(m);
  if (working_set <= 0) return 1.0;
  return std::min(1.0, static_cast<double>(d.l2_size_bytes) / working_set);
}

double loop_bandwidth_gbps(const Device& d, double hit) {
  // Hits stream at the L2's bandwidth, misses at DRAM's: the time per byte is their mix.
  return 1.0 /
         ((1.0 - hit) / d.dram_achievable_gbps + hit / std::max(d.l2_bandwidth_gbps, d.dram_achievable_gbps));
}

namespace {

double simulated_time(const Device& d, const Measurement& m) {
  Device device = d;
  // vLLM's loop reuses one block pool: the part of it L2 holds is read from L2 after the first
  // iteration.
  const double hit = loop_l2_hit_fraction(d, m);
  if (hit > 0) {
    device.dram_achievable_gbps = loop_bandwidth_gbps(d, hit);
    device.dram_peak_gbps = std::max(d.dram_peak_gbps, device.dram_achievable_gbps);
  }
  const auto launches = build_launches(device, m.workload, m.kernel);
  const SimResult r = simulate(device, launches);
  if (!r.ok) return std::numeric_limits<double>::infinity();
  if (m.timing == Timing::host || r.kernels.empty()) return r.time_us;
  const double span = r.time_us - r.kernels.front().start_us;
  // In the loop the host issues one op per iteration: a kernel shorter than the framework's cost
  // of one op leaves the GPU waiting for the host.
  if (m.timing == Timing::loop) return std::max(span + d.inter_kernel_gap_us, d.host_op_overhead_us);
  // CUDA events are commands of the stream: from the start event to the first CTA the front end
  // takes what it takes between any two commands, the gap.
  return span + d.inter_kernel_gap_us;
}

}  // namespace

double predict_time(const Device& d, const Measurement& m) {
  try {
    return simulated_time(d, m);
  } catch (const Error& e) {  // a row the model cannot simulate (a tuning its kernel refuses)
    fail("the row at line ", m.line, " (", m.kernel.label(), ", ", m.group_name, "): ", e.what());
  }
}

ErrorReport evaluate(const Device& device, const std::vector<Measurement>& rows) {
  return error_report(rows, predict_all(device, rows, 0));
}

CalibrationResult calibrate(const Device& device, const std::vector<Measurement>& rows,
                            const CalibrationOptions& o, const std::string& origin) {
  require(o.holdout_fraction >= 0 && o.holdout_fraction < 1, "--holdout ", o.holdout_fraction,
          ": must be in [0, 1)");
  CalibrationResult r;
  r.parameters = o.parameters;
  const bool any_host =
      std::any_of(rows.begin(), rows.end(), [](const Measurement& m) { return m.host_timing(); });
  if (any_host &&
      std::find(r.parameters.begin(), r.parameters.end(), "launch_latency_us") == r.parameters.end())
    r.parameters.push_back("launch_latency_us");
  for (const auto& p : r.parameters) (void)device_field(device, p);  // unknown names fail here

  // Hold out every k-th group (whole groups, so decisions are testable).
  std::vector<Measurement> train, test;
  const std::size_t k =
      o.holdout_fraction > 0
          ? std::max<std::size_t>(2, static_cast<std::size_t>(std::lround(1 / o.holdout_fraction)))
          : 0;
  for (const auto& m : rows) ((k > 0 && m.group % k == k - 1) ? test : train).push_back(m);
  require(train.size() >= r.parameters.size(), origin, ": ", train.size(), " training rows for ",
          r.parameters.size(), " parameters; add measurements or lower --holdout");
  r.train_rows = train.size();
  r.test_rows = test.size();

  // Levenberg-Marquardt in log space on Eigen: J^T J + lambda diag(J^T J) from forward
  // differences, the damped normal equations solved by LU with partial pivoting.
  const auto P = static_cast<Eigen::Index>(r.parameters.size());
  using Vec = Eigen::VectorXd;
  const auto device_at = [&](const Vec& theta) {
    Device d = device;
    for (Eigen::Index j = 0; j < P; ++j) {
      const auto& name = r.parameters[static_cast<std::size_t>(j)];
      double v = std::exp(theta[j]);
      if (name == "dram_achievable_gbps") v = std::min(v, device.dram_peak_gbps);
      if (name == "issue_efficiency") v = std::min(v, 1.0);  // a fraction of the peak issue rate
      set_device_field(d, name, v, "fitted", "calibration in progress");
    }
    return d;
  };
  // Residuals log(pred / meas): relative errors, symmetric in over- and under-prediction.
  const auto residuals = [&](const Device& d) {
    const auto pred = predict_all(d, train, o.threads);
    Vec res(static_cast<Eigen::Index>(train.size()));
    for (std::size_t i = 0; i < train.size(); ++i)
      res[static_cast<Eigen::Index>(i)] =
          std::isfinite(pred[i]) ? std::log(pred[i] / train[i].time_us) : 10.0;
    return res;
  };

  Vec theta(P);
  for (Eigen::Index j = 0; j < P; ++j) {
    const double v = device_field(device, r.parameters[static_cast<std::size_t>(j)]);
    // Zero-valued overheads start small but positive: the fit works in log space.
    theta[j] = std::log(std::max(v, 1e-3));
    r.before.push_back(v);
  }
  Vec res = residuals(device_at(theta));
  double cost = res.squaredNorm();
  double lambda = 1e-2;
  // Finite-difference step in log space. The simulated times are piecewise smooth (a CTA more or
  // less per wave is a kink): where no damped step along a small-step Jacobian improves, the
  // Jacobian is taken again over a wider step, which sees across the kinks, before the fit stops.
  double h = 1e-3;
  const double widest_h = 0.05;
  bool converged = false;
  for (int it = 0; it < o.max_iterations && !converged; ++it) {
    r.iterations = it + 1;
    Eigen::MatrixXd J(res.size(), P);  // J(i, j) = d res_i / d theta_j
    for (Eigen::Index j = 0; j < P; ++j) {
      Vec t2 = theta;
      t2[j] += h;
      J.col(j) = (residuals(device_at(t2)) - res) / h;
    }
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Vec g = J.transpose() * res;
    bool improved = false;
    for (int tries = 0; tries < 8 && !improved; ++tries) {
      Eigen::MatrixXd A = JtJ;
      A.diagonal() += lambda * (JtJ.diagonal().array() + 1e-9).matrix();
      const Vec step = A.partialPivLu().solve(-g);
      // Keep steps modest: at most a factor of e^2 per parameter per iteration.
      const Vec next = theta + step.cwiseMax(-2.0).cwiseMin(2.0);
      const Vec next_res = residuals(device_at(next));
      const double next_cost = next_res.squaredNorm();
      if (next_cost < cost) {
        const double gain = (cost - next_cost) / std::max(cost, 1e-300);
        theta = next;
        res = next_res;
        cost = next_cost;
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        converged = gain < 1e-9;
      } else {
        lambda *= 4;
      }
    }
    if (o.on_iteration) o.on_iteration(it + 1, cost, improved);
    if (!improved) {
      if (h >= widest_h) break;
      h = std::min(h * 5, widest_h);
      lambda = 1e-2;
    }
  }

  r.calibrated = device_at(theta);
  for (const auto& name : r.parameters) r.after.push_back(device_field(r.calibrated, name));
  const auto train_before = predict_all(device, train, o.threads);
  const auto train_after = predict_all(r.calibrated, train, o.threads);
  r.train_before = error_report(train, train_before);
  r.train_after = error_report(train, train_after);
  r.test_before = error_report(test, predict_all(device, test, o.threads));
  r.test_after = error_report(test, predict_all(r.calibrated, test, o.threads));
  char source[512];
  std::snprintf(
      source, sizeof source,
      "fit by pao sim calibrate -m %s (%zu training rows, train MAPE %.1f%%; held-out MAPE %.1f%% on "
      "%zu rows)",
      origin.c_str(), r.train_rows, 100 * r.train_after.mape, 100 * r.test_after.mape, r.test_rows);
  for (std::size_t j = 0; j < r.parameters.size(); ++j) {
    const auto& name = r.parameters[j];
    // A field the rows do not move (no row depends on it, e.g. the bandwidth when none is
    // bandwidth-bound) keeps its value and what was known of it.
    if (std::fabs(r.after[j] - r.before[j]) <= 1e-9 * std::fabs(r.before[j])) {
      const Provenance was = device.provenance.at(name);
      set_device_field(r.calibrated, name, r.before[j], was.confidence, was.source);
      r.after[j] = r.before[j];
      continue;
    }
    auto& p = r.calibrated.provenance[name];
    p.confidence = "fitted";
    p.source = source;
  }
  r.calibrated.description += " Calibrated: " + std::string(source) + ".";
  return r;
}

nlohmann::ordered_json error_report_json(const ErrorReport& e) {
  return {{"rows", e.rows},
          {"mape", e.mape},
          {"max_error", e.max_error},
          {"spearman", e.spearman},
          {"decisions", e.decisions},
          {"decision_accuracy", e.decision_accuracy},
          {"mean_regret", e.mean_regret},
          {"max_regret", e.max_regret}};
}

std::string calibration_json(const CalibrationResult& r, const Device& device) {
  nlohmann::ordered_json j;
  j["device"] = device.name;
  j["iterations"] = r.iterations;
  j["parameters"] = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < r.parameters.size(); ++k)
    j["parameters"].push_back({{"name", r.parameters[k]}, {"before", r.before[k]}, {"after", r.after[k]}});
  j["train_uncalibrated"] = error_report_json(r.train_before);
  j["train_calibrated"] = error_report_json(r.train_after);
  j["held_out_uncalibrated"] = error_report_json(r.test_before);
  j["held_out_calibrated"] = error_report_json(r.test_after);
  return j.dump(2) + "\n";
}

std::string synthesize_measurements_csv(const Device& truth, double noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);  // determinism: the seed fixes every row
  std::normal_distribution<double> normal(0.0, 1.0);
  std::ostringstream os;
  os << "# SYNTHETIC measurements generated by `pao sim calibrate --synthesize` from device '" << truth.name
     << "'\n# with lognormal noise sigma " << noise << " and seed " << seed
     << ". NOT hardware data: it only exercises the calibration pipeline.\n";
  os << "kernel,num_seqs,num_heads,num_kv_heads,head_size,block_size,seq_len,partition_size,dtype,kv_cache_"
        "dtype,timing,time_us\n";
  const std::int32_t seqs[] = {1, 4, 16, 64};
  const std::int32_t heads[] = {8, 32};
  const std::int32_t lens[] = {256, 1024, 4096, 8192, 16384};
  const char* kernels[] = {"v1", "v2:512", "v2:1024"};
  for (auto s : seqs)
    for (auto h : heads)
      for (auto l : lens)
        for (const char* ks : kernels) {
          Measurement m;
          m.workload.num_seqs = s;
          m.workload.num_heads = h;
          m.workload.num_kv_heads = h;
          m.workload.head_size = 128;
          m.workload.seq_lens.assign(static_cast<std::size_t>(s), l);
          m.kernel = parse_kernel_spec(ks, KernelConfig{});
          const double t = predict_time(truth, m);
          const double n = normal(rng);
          if (!std::isfinite(t)) continue;  // e.g. V1 too long for shared memory
          char line[256];
          std::snprintf(line, sizeof line, "%s,%d,%d,%d,128,16,%d,%d,f16,auto,gpu,%.3f\n",
                        m.kernel.kind == KernelVariant::v1 ? "v1" : "v2", s, h, h, l, m.kernel.partition_size,
                        t * std::exp(noise * n));
          os << line;
        }
  return os.str();
}

}  // namespace pao::sim

// Sweeps: axes, the parallel loop over points, CSV and crossovers.
#include "pao/sim/studies/sweep.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/io/csv_read.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/kernel_model.hpp"

namespace pao::sim {
namespace {

double parse_number(std::string_view text, std::string_view what) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  require(!s.empty() && end != s.c_str() && *end == '\0', what, ": '", s, "' is not a number");
  require(std::isfinite(v), what, ": '", s, "' is not a finite number");
  return v;
}

/// The smallest value of a workload / kernel axis: lengths and registers may be 0 (an empty sequence,
/// the model's default), every count and size at least 1.
double axis_minimum(const std::string& name) {
  return name == "seq-len" || name == "query-len" || name == "max-seq-len" || name == "regs" ? 0 : 1;
}

constexpr std::size_t kMaxAxisValues = 100000;

bool is_workload_axis(const std::string& name) {
  const auto& names = workload_axis_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::int32_t as_int(double v, const std::string& name) {
  require(std::floor(v) == v && std::fabs(v) < 2e9, "axis ", name, ": value ", v, " is not an integer");
  return static_cast<std::int32_t>(v);
}

/// Row-major index -> per-axis indices (first axis fastest).
std::vector<std::size_t> unravel(std::size_t index, const std::vector<Axis>& axes) {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t a = 0; a < axes.size(); ++a) {
    idx[a] = index % axes[a].values.size();
    index /= axes[a].values.size();
  }
  return idx;
}

}  // namespace

const std::vector<std::string>& workload_axis_names() {
  static const std::vector<std::string> names = {
      "num-seqs",    "num-heads",      "num-kv-heads", "head-size", "block-size", "seq-len", "query-len",
      "max-seq-len", "partition-size", "threads",      "regs",      "block-m",    "block-n", "fallback-tile"};
  return names;
}

Axis parse_axis(std::string_view spec) {
  const auto eq = spec.find('=');
  require(eq != std::string_view::npos && eq > 0, "--axis '", spec,
          "': expected NAME=LIST, e.g. seq-len=512:65536:x2 or num-seqs=1,8,64");
  Axis axis;
  axis.name = std::string(spec.substr(0, eq));
  if (!is_workload_axis(axis.name)) {
    std::string field = axis.name;
    if (field.rfind("device.", 0) == 0) field = field.substr(7);
    const auto& keys = device_field_keys();
    if (std::find(keys.begin(), keys.end(), field) == keys.end()) {
      std::string known;
      for (const auto& n : workload_axis_names()) known += n + " ";
      fail("--axis ", axis.name, ": unknown axis (workload/kernel axes: ", known,
           "; or any device field such as num_sms, dram_achievable_gbps)");
    }
    axis.name = field;
  }
  const std::string_view list = spec.substr(eq + 1);
  const std::string what = "--axis " + axis.name;
  if (list.find(':') != std::string_view::npos) {
    const auto c1 = list.find(':');
    const auto c2 = list.find(':', c1 + 1);
    require(c2 != std::string_view::npos, what, ": expected start:stop:xFACTOR or start:stop:+STEP");
    const double start = parse_number(list.substr(0, c1), what);
    const double stop = parse_number(list.substr(c1 + 1, c2 - c1 - 1), what);
    const std::string_view step = list.substr(c2 + 1);
    require(!step.empty() && (step[0] == 'x' || step[0] == '+'), what, ": step '", step,
            "' must be xFACTOR (geometric) or +STEP (linear)");
    const double s = parse_number(step.substr(1), what);
    require(stop >= start, what, ": stop ", stop, " < start ", start);
    if (step[0] == 'x') {
      require(s > 1 && start > 0, what, ": a geometric axis needs start > 0 and factor > 1");
      axis.geometric = true;
      for (double v = start; v <= stop * (1 + 1e-12) && axis.values.size() <= kMaxAxisValues; v *= s)
        axis.values.push_back(std::round(v * 1e6) / 1e6);
    } else {
      require(s > 0, what, ": step must be positive");
      for (double v = start; v <= stop + s * 1e-9 && axis.values.size() <= kMaxAxisValues; v += s)
        axis.values.push_back(v);
    }
  } else {
    std::size_t pos = 0;
    while (true) {
      const auto comma = list.find(',', pos);
      axis.values.push_back(parse_number(
          list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos), what));
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    axis.geometric =
        axis.values.size() > 2 && axis.values.front() > 0 && axis.values.back() / axis.values.front() >= 16;
  }
  require(!axis.values.empty() && axis.values.size() <= kMaxAxisValues, what, ": needs 1..", kMaxAxisValues,
          " values");
  if (is_workload_axis(axis.name)) {  // a device field's range is the descriptor's (set_device_field)
    const double lo = axis_minimum(axis.name);
    for (const double v : axis.values)
      require(std::floor(v) == v && v >= lo && v <= std::numeric_limits<std::int32_t>::max(), what,
              ": value ", v, " must be an integer in [", lo, ", ", std::numeric_limits<std::int32_t>::max(),
              "]");
  }
  if (axis.name == "num-seqs") {  // every point builds its lengths: checked before any is allocated
    const auto most = static_cast<std::int64_t>(*std::max_element(axis.values.begin(), axis.values.end()));
    require_memory(what + " = " + std::to_string(most) + " (the per-sequence lengths of a point)",
                   32.0 * most, "lower the num-seqs axis");
  }
  return axis;
}

void apply_axes(const std::vector<Axis>& axes, const std::vector<double>& values, Workload& w,
                KernelConfig& k, Device& d) {
  // num-seqs first: it resizes the per-sequence lists that the length axes then fill.
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].name != "num-seqs") continue;
    const std::int32_t n = as_int(values[a], axes[a].name);
    require(n >= 0, "axis num-seqs = ", n, ": must be >= 0");
    const std::int32_t len = w.seq_lens.empty() ? 0 : w.seq_lens.front();
    const std::int32_t qlen = w.query_lens.empty() ? 0 : w.query_lens.front();
    w.num_seqs = n;
    w.seq_lens.assign(static_cast<std::size_t>(n), len);
    if (!w.query_lens.empty()) w.query_lens.assign(static_cast<std::size_t>(n), qlen);
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string& name = axes[a].name;
    const double v = values[a];
    if (name == "num-seqs") continue;
    if (!is_workload_axis(name)) {
      set_device_field(d, name, v, "assumed", "sweep axis");
      continue;
    }
    const std::int32_t i = as_int(v, name);
    if (name == "num-heads") {
      // Keep the GQA ratio when sweeping heads.
      const std::int32_t group = w.num_heads / std::max(w.num_kv_heads, 1);
      w.num_heads = i;
      w.num_kv_heads = std::max(1, i / std::max(group, 1));
    } else if (name == "num-kv-heads")
      w.num_kv_heads = i;
    else if (name == "head-size")
      w.head_size = i;
    else if (name == "block-size")
      w.block_size = i;
    else if (name == "seq-len")
      std::fill(w.seq_lens.begin(), w.seq_lens.end(), i);
    else if (name == "query-len")
      w.query_lens.assign(w.seq_lens.size(), i);
    else if (name == "max-seq-len")
      w.max_seq_len = i;
    else if (name == "partition-size")
      k.partition_size = i;
    else if (name == "threads")
      k.threads_per_cta = i;
    else if (name == "regs")
      k.registers_per_thread = i;
    else if (name == "block-m")
      k.block_m = i;
    else if (name == "block-n")
      k.block_n = i;
    else if (name == "fallback-tile")
      k.fallback_tile = i;
  }
  // A swept max-seq-len below a swept seq-len would be rejected; lengths win.
  if (w.max_seq_len > 0)
    for (auto l : w.seq_lens) w.max_seq_len = std::max(w.max_seq_len, l);
}

std::vector<SweepPoint> run_sweep(const SweepSpec& spec) {
  std::size_t combos = 1;
  for (const auto& a : spec.axes) combos *= a.values.size();
  const std::size_t nk = spec.kernels.size();
  const std::size_t total = combos * nk;
  std::vector<SweepPoint> points(total);
  const auto n = static_cast<std::int64_t>(total);
  const int threads = spec.threads > 0 ? spec.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t p = 0; p < n; ++p) {
    const auto i = static_cast<std::size_t>(p);
    SweepPoint& pt = points[i];
    pt.kernel = i % nk;
    const auto idx = unravel(i / nk, spec.axes);
    pt.axis_values.resize(spec.axes.size());
    for (std::size_t a = 0; a < spec.axes.size(); ++a) pt.axis_values[a] = spec.axes[a].values[idx[a]];
    try {
      Workload w = spec.base;
      KernelConfig k = spec.kernels[pt.kernel];
      Device d = spec.device;
      apply_axes(spec.axes, pt.axis_values, w, k, d);
      const auto launches = build_launches(d, w, k);
      const SimResult r = simulate(d, launches);
      pt.ok = r.ok;
      pt.error = r.error;
      pt.launches = static_cast<std::int64_t>(r.kernels.size());
      if (!r.kernels.empty()) {
        pt.ctas = r.kernels.front().ctas;
        pt.waves = r.kernels.front().waves;
      }
      if (r.ok) {
        pt.time_us = r.time_us;
        pt.dram_bytes = r.dram_bytes;
        pt.achieved_gbps = r.time_us > 0 ? r.dram_bytes / r.time_us * 1e-3 : 0;
      }
    } catch (const std::exception& e) {
      pt.ok = false;
      pt.error = e.what();
    }
  }
  return points;
}

std::string sweep_csv(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::ostringstream os;
  for (const auto& a : spec.axes) os << a.name << ",";
  os << "kernel,ok,time_us,launches,ctas,waves,dram_bytes,achieved_gbps,error\n";
  char buf[256];
  for (const auto& p : points) {
    for (double v : p.axis_values) {
      std::snprintf(buf, sizeof buf, "%.10g,", v);
      os << buf;
    }
    std::snprintf(buf, sizeof buf, "%s,%d,%.6g,%lld,%lld,%.6g,%.10g,%.6g,",
                  spec.kernels[p.kernel].label().c_str(), p.ok ? 1 : 0, p.ok ? p.time_us : 0.0,
                  static_cast<long long>(p.launches), static_cast<long long>(p.ctas), p.waves, p.dram_bytes,
                  p.achieved_gbps);
    os << buf << csv_cell(p.error) << "\n";
  }
  return os.str();
}

std::vector<Crossover> find_crossovers(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::vector<Crossover> out;
  if (spec.axes.empty()) return out;
  const std::size_t nk = spec.kernels.size();
  const std::size_t n0 = spec.axes[0].values.size();
  std::size_t others = 1;
  for (std::size_t a = 1; a < spec.axes.size(); ++a) others *= spec.axes[a].values.size();
  const bool geo = spec.axes[0].geometric;
  for (std::size_t o = 0; o < others; ++o) {
    for (std::size_t a = 0; a < nk; ++a) {
      for (std::size_t b = a + 1; b < nk; ++b) {
        for (std::size_t i = 0; i + 1 < n0; ++i) {
          const auto& pa0 = points[((o * n0) + i) * nk + a];
          const auto& pb0 = points[((o * n0) + i) * nk + b];
          const auto& pa1 = points[((o * n0) + i + 1) * nk + a];
          const auto& pb1 = points[((o * n0) + i + 1) * nk + b];
          if (!(pa0.ok && pb0.ok && pa1.ok && pb1.ok)) continue;
          const double d0 = std::log(pa0.time_us / pb0.time_us);
          const double d1 = std::log(pa1.time_us / pb1.time_us);
          if (d0 == 0 || (d0 > 0) == (d1 > 0) || d1 == 0) continue;
          const double x0 = pa0.axis_values[0], x1 = pa1.axis_values[0];
          const double f = d0 / (d0 - d1);
          Crossover c;
          c.a = a;
          c.b = b;
          c.at = geo ? std::exp(std::log(x0) + f * (std::log(x1) - std::log(x0))) : x0 + f * (x1 - x0);
          c.faster_below = d0 < 0 ? a : b;
          // A near-tie: within 2% on both sides and at the next point too (or there is none), i.e.
          // wave quantisation between two equivalent kernels, not a trend.
          double d2 = 0;
          if (i + 2 < n0) {
            const auto& pa2 = points[((o * n0) + i + 2) * nk + a];
            const auto& pb2 = points[((o * n0) + i + 2) * nk + b];
            d2 = pa2.ok && pb2.ok ? std::log(pa2.time_us / pb2.time_us) : 1.0;
          }
          c.near_tie = std::max({std::fabs(d0), std::fabs(d1), std::fabs(d2)}) < std::log(1.02);
          c.other_values.assign(pa0.axis_values.begin() + 1, pa0.axis_values.end());
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

}  // namespace pao::sim

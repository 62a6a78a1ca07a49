// Reports of a simulation: the table `pao sim run` prints and its --json form.
#include "pao/sim/engine/report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "pao/cases/case_fields.hpp"

namespace pao::sim {

std::string device_summary(const Device& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: %lld SMs x warp %lld, DRAM %.0f/%.0f GB/s (achievable/peak), launch %.1f us",
                d.name.c_str(), static_cast<long long>(d.num_sms), static_cast<long long>(d.warp_size),
                d.dram_achievable_gbps, d.dram_peak_gbps, d.launch_latency_us);
  return buf;
}

namespace {

/// Kernels of one name summed (the fallback launches thousands of small kernels).
struct KernelGroup {
  KernelResult sum;
  std::int64_t launches = 0;
};

std::vector<KernelGroup> group_by_name(const std::vector<KernelResult>& kernels) {
  std::vector<KernelGroup> groups;
  for (const auto& k : kernels) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const KernelGroup& g) { return g.sum.name == k.name; });
    if (it == groups.end()) {
      groups.push_back({k, 1});
      continue;
    }
    it->launches += 1;
    it->sum.time_us += k.time_us;
    it->sum.busy_us += k.busy_us;
    it->sum.ctas += k.ctas;
    it->sum.dram_bytes += k.dram_bytes;
    it->sum.waves += k.waves;
    it->sum.sm_utilisation += k.sm_utilisation;
  }
  for (auto& g : groups) {
    g.sum.achieved_gbps = g.sum.busy_us > 0 ? g.sum.dram_bytes / g.sum.busy_us * 1e-3 : 0;
    g.sum.sm_utilisation /= static_cast<double>(g.launches);
  }
  return groups;
}

}  // namespace

std::string format_result(const SimResult& r, const Device& d) {
  std::ostringstream os;
  char line[512];
  const bool grouped = r.kernels.size() > 8;
  std::snprintf(line, sizeof line, "%-28s %11s %11s %9s %14s %8s %9s %8s\n",
                grouped ? "kernel (x launches)" : "kernel", "time_us", "busy_us", "CTAs", "CTAs/SM", "waves",
                "GB/s", "SM util");
  os << line;
  std::vector<KernelGroup> rows;
  if (grouped)
    rows = group_by_name(r.kernels);
  else
    for (const auto& k : r.kernels) rows.push_back({k, 1});
  for (const auto& [k, launches] : rows) {
    std::string name = k.name;
    if (grouped) name += " (x" + std::to_string(launches) + ")";
    if (!k.occupancy.fits()) {
      std::snprintf(line, sizeof line, "%-28s %s\n", name.c_str(), k.occupancy.limiter.c_str());
      os << line;
      continue;
    }
    char occ[64];
    std::snprintf(occ, sizeof occ, "%lld (%s)", static_cast<long long>(k.occupancy.ctas_per_sm),
                  k.occupancy.limiter == "shared memory" ? "smem" : k.occupancy.limiter.c_str());
    std::snprintf(line, sizeof line, "%-28s %11.2f %11.2f %9lld %14s %8.2f %9.1f %7.0f%%\n", name.c_str(),
                  k.time_us, k.busy_us, static_cast<long long>(k.ctas), occ, k.waves, k.achieved_gbps,
                  100.0 * k.sm_utilisation);
    os << line;
  }
  if (r.ok) {
    std::snprintf(line, sizeof line,
                  "%-28s %11.2f   (%.3f MB moved, %.1f GB/s over the whole time, %.0f%% of achievable)\n",
                  "total", r.time_us, r.dram_bytes * 1e-6,
                  r.time_us > 0 ? r.dram_bytes / r.time_us * 1e-3 : 0.0,
                  r.time_us > 0 ? 100.0 * r.dram_bytes / r.time_us * 1e-3 / d.dram_achievable_gbps : 0.0);
    os << line;
  } else {
    os << "does not run: " << r.error << "\n";
  }
  return os.str();
}

nlohmann::ordered_json result_to_json(const SimResult& r, const Device& d, const Workload& w,
                                      const KernelConfig& k) {
  nlohmann::ordered_json j;
  j["ok"] = r.ok;
  if (!r.ok) j["error"] = r.error;
  j["device"] = d.name;
  j["kernel"] = k.label();
  nlohmann::ordered_json wl;
  cases::write_launch_shape(wl, w);
  wl["max_seq_len"] = w.effective_max_seq_len();
  wl["seq_lens"] = w.seq_lens;
  if (!w.query_lens.empty()) wl["query_lens"] = w.query_lens;
  wl["dtype"] = std::string(dtype_name(w.dtype));
  wl["kv_cache_dtype"] = std::string(dtype_name(w.kv_cache_dtype));
  j["workload"] = wl;
  if (r.ok)
    j["time_us"] = r.time_us;
  else
    j["time_us"] = nullptr;
  j["dram_bytes"] = r.dram_bytes;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const auto& kr : r.kernels)
    j["kernels"].push_back({{"name", kr.name},
                            {"time_us", kr.time_us},
                            {"busy_us", kr.busy_us},
                            {"ctas", kr.ctas},
                            {"waves", kr.full_waves},
                            {"fractional_waves", kr.waves},
                            {"ctas_per_sm", kr.occupancy.ctas_per_sm},
                            {"occupancy_limiter", kr.occupancy.limiter},
                            {"achieved_gbps", kr.achieved_gbps},
                            {"sm_utilisation", kr.sm_utilisation},
                            {"warp_instructions", kr.warp_instructions},
                            {"issue_utilisation", kr.issue_utilisation},
                            {"mean_occupancy", kr.mean_occupancy},
                            {"max_cta_iterations", kr.max_cta_iterations},
                            {"dram_bytes", kr.dram_bytes},
                            {"issue_us", kr.issue_us},
                            {"start_us", kr.start_us},
                            {"end_us", kr.end_us}});
  return j;
}

}  // namespace pao::sim

// Dispatch advice: the grid of simulated optima and the scoring of vLLM's and FlashAttention's rules.
#include "pao/sim/studies/advise.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/kernel_model.hpp"

namespace pao::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double simulate_time(const Device& d, const Workload& w, const KernelConfig& k) {
  const auto launches = build_launches(d, w, k);
  const SimResult r = simulate(d, launches);
  return r.ok ? r.time_us : kInf;
}

Workload cell_workload(const AdviseGrid& g, std::int32_t seqs, std::int32_t heads, std::int32_t len) {
  Workload w = g.base;
  w.num_seqs = seqs;
  w.num_heads = heads;
  w.num_kv_heads = std::max(1, heads / std::max(g.gqa_group, 1));
  w.seq_lens.assign(static_cast<std::size_t>(seqs), len);
  w.query_lens.clear();
  w.max_seq_len = len;
  return w;
}

bool is_v1(const KernelConfig& k) { return k.kind == KernelVariant::v1; }

RuleScore score(const std::string& name, const AdviseResult& r, bool fa) {
  RuleScore s;
  s.name = name;
  double regret_sum = 0;
  std::size_t ran = 0, right = 0, class_right = 0;
  for (const auto& c : r.cells) {
    const double best = c.best_time();
    if (!std::isfinite(best)) continue;
    ++s.cells;
    const double t = fa ? c.fa_time : c.times[c.vllm];
    const bool choice_v1 = fa ? is_v1(c.fa) : c.vllm == 0;
    if (choice_v1 == is_v1(r.candidates[c.best])) ++class_right;
    if (!std::isfinite(t)) {
      ++s.cannot_run;  // a wrong decision, but no finite regret to average
      continue;
    }
    const double regret = t / best - 1.0;
    ++ran;
    if (regret <= 0.02) ++right;
    regret_sum += regret;
    if (regret > s.worst_regret) {
      s.worst_regret = regret;
      char b[128];
      std::snprintf(b, sizeof b, "num_seqs=%d num_heads=%d max_seq_len=%d", c.num_seqs, c.num_heads,
                    c.max_seq_len);
      s.worst_cell = b;
    }
  }
  if (s.cells > 0) {
    s.accuracy = static_cast<double>(right) / static_cast<double>(s.cells);
    s.class_accuracy = static_cast<double>(class_right) / static_cast<double>(s.cells);
  }
  if (ran > 0) s.mean_regret = regret_sum / static_cast<double>(ran);
  return s;
}

/// Preference among near-ties: V1 (one launch), vLLM's V2-512, then smaller partitions.
int simplicity_rank(const KernelConfig& k) {
  if (k.kind == KernelVariant::v1) return 0;
  if (k.partition_size == KernelTuning{}.partition_size) return 1;
  return 2 + k.partition_size / 16;
}

}  // namespace

bool vllm_use_v1(std::int64_t num_seqs, std::int64_t num_heads, std::int64_t max_seq_len,
                 std::int64_t partition_size) {
  const std::int64_t max_num_partitions = ceil_div<std::int64_t>(max_seq_len, partition_size);
  return max_seq_len <= 8192 && (max_num_partitions == 1 || num_seqs * num_heads > 512);
}

int fa_block_n(std::int64_t head_size) { return head_size <= 64 ? 256 : (head_size <= 128 ? 128 : 64); }

int fa_num_splits(std::int64_t work, std::int64_t num_sms, std::int64_t num_n_blocks,
                  std::int64_t max_splits) {
  if (static_cast<double>(work) >= 0.8 * static_cast<double>(num_sms)) return 1;
  const std::int64_t limit = std::min({max_splits, num_sms, num_n_blocks});
  // A split count is eligible only if it changes the blocks per split: with 64 blocks, 12 splits
  // of 6 blocks would leave the 12th empty, i.e. be 11 splits.
  const auto eligible = [&](std::int64_t s) {
    return s == 1 || ceil_div<std::int64_t>(num_n_blocks, s) != ceil_div<std::int64_t>(num_n_blocks, s - 1);
  };
  const auto efficiency = [&](std::int64_t s) {
    const double waves = static_cast<double>(work * s) / static_cast<double>(num_sms);
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (std::int64_t s = 1; s <= limit; ++s)
    if (eligible(s)) best = std::max(best, efficiency(s));
  for (std::int64_t s = 1; s <= limit; ++s)
    if (eligible(s) && efficiency(s) >= 0.85 * best) return static_cast<int>(s);
  return 1;
}

KernelConfig fa_choice(const Workload& w, const Device& d, const KernelConfig& defaults,
                       std::int64_t sm_factor) {
  const std::int64_t block_n = fa_block_n(w.head_size);
  const std::int64_t len = w.effective_max_seq_len();
  const std::int64_t n_blocks = std::max<std::int64_t>(1, ceil_div<std::int64_t>(len, block_n));
  const std::int64_t work = static_cast<std::int64_t>(w.num_seqs) * w.num_heads;  // one m-block in decode
  const int splits = fa_num_splits(work, d.num_sms * sm_factor, n_blocks);
  KernelConfig k = defaults;
  if (splits <= 1) {
    k.kind = KernelVariant::v1;
    return k;
  }
  k.kind = KernelVariant::v2;
  const std::int64_t keys = ceil_div<std::int64_t>(n_blocks, splits) * block_n;
  k.partition_size = static_cast<std::int32_t>(round_up<std::int64_t>(keys, w.block_size));
  return k;
}

AdviseResult run_advise(const Device& device, const AdviseGrid& g) {
  require(!g.num_seqs.empty() && !g.num_heads.empty() && !g.max_seq_lens.empty(), "advise: empty grid");
  AdviseResult r;
  KernelConfig v1 = g.kernel_defaults;
  v1.kind = KernelVariant::v1;
  r.candidates.push_back(v1);
  for (auto p : g.partitions) {
    KernelConfig v2 = g.kernel_defaults;
    v2.kind = KernelVariant::v2;
    v2.partition_size = p;
    r.candidates.push_back(v2);
  }
  const auto vllm_index = [&]() -> std::size_t {
    for (std::size_t i = 1; i < r.candidates.size(); ++i)
      if (r.candidates[i].partition_size == KernelTuning{}.partition_size) return i;
    return r.candidates.size();  // vLLM's partition not among the candidates: added below
  }();
  if (vllm_index == r.candidates.size()) {
    KernelConfig v2 = g.kernel_defaults;
    v2.kind = KernelVariant::v2;
    v2.partition_size = KernelTuning{}.partition_size;
    r.candidates.push_back(v2);
  }
  for (auto s : g.num_seqs)
    for (auto h : g.num_heads)
      for (auto l : g.max_seq_lens) {
        AdviseCell c;
        c.num_seqs = s;
        c.num_heads = h;
        c.max_seq_len = l;
        c.times.assign(r.candidates.size(), kInf);
        r.cells.push_back(c);
      }
  const std::size_t nc = r.candidates.size() + 1;  // + FlashAttention's choice
  const auto total = static_cast<std::int64_t>(r.cells.size() * nc);
  const int threads = g.threads > 0 ? g.threads : omp_get_max_threads();
  // A run the model refuses is a time of +inf with its reason kept: an exception must not leave
  // the parallel region (it would terminate the process).
  std::vector<std::string> refusals(static_cast<std::size_t>(total));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t i = 0; i < total; ++i) {
    AdviseCell& c = r.cells[static_cast<std::size_t>(i) / nc];
    const std::size_t k = static_cast<std::size_t>(i) % nc;
    try {
      const Workload w = cell_workload(g, c.num_seqs, c.num_heads, c.max_seq_len);
      if (k < r.candidates.size()) {
        c.times[k] = simulate_time(device, w, r.candidates[k]);
      } else {
        c.fa = fa_choice(w, device, g.kernel_defaults);
        c.fa_time = simulate_time(device, w, c.fa);
      }
    } catch (const std::exception& e) {
      refusals[static_cast<std::size_t>(i)] =
          "num_seqs=" + std::to_string(c.num_seqs) + " num_heads=" + std::to_string(c.num_heads) +
          " max_seq_len=" + std::to_string(c.max_seq_len) + " " +
          (k < r.candidates.size() ? r.candidates[k].label() : std::string("FlashAttention's choice")) +
          ": " + e.what();
      if (k >= r.candidates.size()) c.fa_time = kInf;
    }
  }
  for (const auto& why : refusals)
    if (!why.empty() && r.refused_runs++ == 0) r.first_refusal = why;
  // Every run refused: the grid or the tuning is bad input, not a finding about the device.
  require(r.refused_runs < refusals.size(), "advise: every run was refused; the first: ", r.first_refusal);
  for (auto& c : r.cells) {
    c.best = static_cast<std::size_t>(std::min_element(c.times.begin(), c.times.end()) - c.times.begin());
    c.advised = c.best;
    for (std::size_t k = 0; k < c.times.size(); ++k)
      if (c.times[k] <= c.best_time() * 1.02 &&
          simplicity_rank(r.candidates[k]) < simplicity_rank(r.candidates[c.advised]))
        c.advised = k;
    c.vllm = vllm_use_v1(c.num_seqs, c.num_heads, c.max_seq_len) ? 0 : vllm_index;
  }
  r.vllm = score("vLLM use_v1 rule", r, false);
  r.fa = score("FlashAttention num_splits_heuristic", r, true);
  return r;
}

std::string advised_rule_table(const AdviseResult& r) {
  std::ostringstream os;
  std::vector<std::int32_t> lens;
  for (const auto& c : r.cells)
    if (std::find(lens.begin(), lens.end(), c.max_seq_len) == lens.end()) lens.push_back(c.max_seq_len);
  char b[64];
  std::snprintf(b, sizeof b, "%-20s", "seqs x heads \\ len");
  os << b;
  for (auto l : lens) {
    std::snprintf(b, sizeof b, " %8d", l);
    os << b;
  }
  os << "\n";
  for (std::size_t i = 0; i < r.cells.size(); i += lens.size()) {
    std::snprintf(b, sizeof b, "%6d x %-11d", r.cells[i].num_seqs, r.cells[i].num_heads);
    os << b;
    for (std::size_t j = 0; j < lens.size() && i + j < r.cells.size(); ++j) {
      const auto& c = r.cells[i + j];
      std::snprintf(b, sizeof b, " %8s",
                    std::isfinite(c.best_time()) ? r.candidates[c.advised].label().c_str() : "-");
      os << b;
    }
    os << "\n";
  }
  return os.str();
}

std::string advised_rule_json(const AdviseResult& r, const Device& device) {
  constexpr const char* kRule =
      "for (num_seqs, num_heads, max_seq_len) use the listed kernel (the simplest within 2% of the simulated "
      "best); between grid points use the next larger grid point";
  nlohmann::ordered_json j = {{"device", device.name},
                              {"generator", "pao sim advise"},
                              {"rule", kRule},
                              {"rows", nlohmann::ordered_json::array()}};
  for (const auto& c : r.cells) {
    nlohmann::ordered_json row = {
        {"num_seqs", c.num_seqs}, {"num_heads", c.num_heads}, {"max_seq_len", c.max_seq_len}};
    if (!std::isfinite(c.best_time())) {  // no candidate fits: nothing to advise
      row["kernel"] = nullptr;
      row["note"] = "no candidate kernel fits on the device";
      j["rows"].push_back(row);
      continue;
    }
    const auto& k = r.candidates[c.advised];
    row["kernel"] = to_string(k.kind);
    if (k.kind == KernelVariant::v2) row["partition_size"] = k.partition_size;
    if (std::isfinite(c.times[c.advised])) {
      row["time_us"] = c.times[c.advised];
      row["speedup_vs_vllm"] = c.times[c.vllm] / c.times[c.advised];
    }
    j["rows"].push_back(row);
  }
  return j.dump(1) + "\n";
}

}  // namespace pao::sim

// The event-driven CTA engine (model and equations in engine.hpp and docs/simulator.md).
//
// State between events: every running CTA is in one of three states — dispatching (holds its slot,
// moves nothing, ends at a fixed time), capped (streams at its own cap u_i, finishes at a fixed
// time) or level (streams at its SM's level lambda_s, finishes when the SM's integral
// Lambda_s = \int lambda_s dt reaches its target). SMs at the global level L share one integral
// Lambda_G (plus a per-SM offset); SMs held by their own cap keep a private one. A change of L
// therefore touches no CTA. After an event on SM s only s is updated (sorted caps, prefix sums);
// L = (G - A) / B from per-SM sums, checked against every SM's bounds, and only a boundary crossing
// triggers the exact re-solve and a re-levelling of every SM (after_flow_change()). The test suite
// compares all of this against a brute-force reference that re-solves everything at every event.
#include "pao/sim/engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "pao/core/error.hpp"

namespace pao::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Events this close in time (µs) are simultaneous: times reached by different sums of the same
/// durations differ in their last bits, and that must not decide which SM is served first.
constexpr double kSimultaneousUs = 1e-9;

/// The order of an SM's flowing CTAs: by cap, then by slot index.
bool cap_order(double ca, std::int64_t oa, double cb, std::int64_t ob) {
  return ca < cb || (ca == cb && oa < ob);
}

/// Up to this many flowing CTAs per SM, sort_by_cap() sorts by insertion.
constexpr std::int64_t kInsertionSortMax = 64;

/// Sorts an SM's k flowing CTAs by cap_order(): caps `c` and slot indices `o`, side by side, of
/// which the first `sorted` are in order already. Returns the first position that changed.
/// A rebuild recomputes caps that nearly keep their order (identical CTAs keep it, and
/// insert_flow() puts a new CTA where identical ones would), so insertion sort costs O(k) there,
/// where std::sort through the slots took a third of the engine's time on issue-bound grids;
/// beyond kInsertionSortMax CTAs std::sort bounds the worst case. The key is unique, so either
/// gives the same order.
std::int64_t sort_by_cap(double* c, std::int64_t* o, std::int64_t k, std::int64_t sorted) {
  if (sorted >= k) return k;
  if (k > kInsertionSortMax) {
    std::vector<std::pair<double, std::int64_t>> keyed(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) keyed[static_cast<std::size_t>(j)] = {c[j], o[j]};
    std::sort(keyed.begin(), keyed.end());  // pairs compare as (cap, slot), as cap_order() does
    for (std::int64_t j = 0; j < k; ++j) std::tie(c[j], o[j]) = keyed[static_cast<std::size_t>(j)];
    return 0;
  }
  std::int64_t first_changed = k;
  for (std::int64_t j = std::max<std::int64_t>(sorted, 1); j < k; ++j) {
    const double cj = c[j];
    const std::int64_t oj = o[j];
    std::int64_t p = j;
    for (; p > 0 && cap_order(cj, oj, c[p - 1], o[p - 1]); --p) {
      c[p] = c[p - 1];
      o[p] = o[p - 1];
    }
    c[p] = cj;
    o[p] = oj;
    if (p < j) first_changed = std::min(first_changed, p);
  }
  return first_changed;
}

/// A launch's per-SM arithmetic and issue rates, per microsecond (the same for all its CTAs).
struct ComputeRates {
  double flops_per_us = 0;
  double issue_per_us = 0;
};

ComputeRates compute_rates(const Device& device, const Launch& launch) {
  ComputeRates r;
  r.flops_per_us =
      (launch.compute == ComputeUnit::matrix_fp16 ? device.per_sm_fp16_flops() : device.per_sm_fp32_flops()) *
      1e-6;
  r.issue_per_us = device.per_sm_issue_rate() * 1e-6;
  return r;
}

/// A launch's CTA latency floors' rates (the same for all its CTAs).
struct LatencyRates {
  double iteration_us = 0;         // per dependent iteration
  double warp_instruction_us = 0;  // per instruction of the busiest warp
};

/// The launch's kernel code may bring its own cycles per in-order instruction (its dependence
/// chains: Launch::cycles_per_warp_instruction); else the device's.
LatencyRates latency_rates(const Device& device, const Launch& launch) {
  LatencyRates r;
  r.iteration_us = device.iteration_latency_us;
  const double cycles = launch.cycles_per_warp_instruction > 0 ? launch.cycles_per_warp_instruction
                                                               : device.cycles_per_warp_instruction;
  if (device.clock_ghz > 0) r.warp_instruction_us = cycles / (device.clock_ghz * 1e3);
  return r;
}

/// cta_latency_us() (engine.hpp) at a launch's rates: a warp's dependent loads and its
/// instructions between them take their turns (the loads cannot issue before the instructions
/// that compute their addresses, the instructions wait on the loads): the two add up.
double cta_latency_us(const LatencyRates& rates, const CtaWork& work) {
  return static_cast<double>(work.iterations) * rates.iteration_us +
         work.busiest_warp_instructions * rates.warp_instruction_us;
}

/// cta_compute_us() (engine.hpp) at a launch's rates.
double cta_compute_us(const ComputeRates& rates, const CtaWork& work) {
  const double arithmetic = work.flops > 0 && rates.flops_per_us > 0 ? work.flops / rates.flops_per_us : 0.0;
  const double issue = work.warp_instructions > 0 && rates.issue_per_us > 0
                           ? work.warp_instructions / rates.issue_per_us
                           : 0.0;
  return std::max(arithmetic, issue);
}

/// Which CTA a slot holds, since when (for the trace) and its cost class (CtaCosts); kept apart
/// from the slot's hot state.
struct Resident {
  std::int64_t cta = -1;
  double start_t = 0;
  std::int64_t cost_class = -1;
};

/// What the engine derives from a CTA's work before it runs. CTAs with identical work (grid
/// neighbours, mostly: V2's full partitions, a fallback op's CTAs) share one, computed once, and
/// its cost class: the first such CTA's index.
struct CtaCosts {
  const CtaWork* work = nullptr;  // the CTA these were computed for
  std::int64_t cost_class = -1;
  double compute_us = 0;      // cta_compute_us
  double latency_us = 0;      // cta_latency_us
  double base_cap = kInf;     // min(bytes / latency, per-SM cap)
  double k_threshold = kInf;  // bytes / (compute_us x base_cap); kInf without arithmetic or bytes
};

/// A CTA slot's timing state: a free slot has every time kInf; a dispatching one its ready_t; a
/// flowing one its finish_t (capped) or its target (at the level), so the times say the phase.
/// One cache line: every event scans its SM's slots.
struct alignas(64) Slot {
  double ready_t = kInf;  // dispatching: when the phase ends (kInf otherwise)
  double bytes = 0;
  double base_cap = kInf;     // min(bytes / latency floor, per-SM cap), bytes/us
  double compute_us = 0;      // arithmetic and issue alone on the SM (cta_compute_us)
  double k_threshold = kInf;  // the arithmetic share binds when more CTAs than this compute (kInf: none)
  double cap = 0;             // u_i
  double finish_t = kInf;     // capped: when the last byte arrives (kInf otherwise)
  double target = kInf;       // level: the SM's Lambda at which the last byte arrives (kInf otherwise)

  bool capped() const { return finish_t != kInf; }
};

/// An SM's bandwidth state. Mode GLOBAL: lambda_s = L and Lambda_s = Lambda_G + off. Mode LOCAL:
/// lambda_s = `lambda` (the SM's own cap level mu_s, or kInf when nothing binds) and
/// Lambda_s = lam_ref + lambda * (t - t_ref).
struct Sm {
  std::int64_t first_slot = 0;
  std::int64_t resident = 0;
  std::int64_t k = 0;          // flowing CTAs, sorted by (cap, slot) in the flat arrays
  std::int64_t computing = 0;  // flowing CTAs with arithmetic or instructions
  std::int64_t n_capped = 0;   // sorted positions [0, n_capped) are capped
  // Flowing CTAs of the cost class of the first CTA that flowed on the empty SM; when that is all
  // of them, they share one cap and rebuild() computes it once.
  std::int64_t uniform_class = -1, n_uniform = 0;
  double mu = kInf;                     // level at which this SM alone reaches its cap
  double min_k_threshold = kInf;        // over the flowing CTAs
  std::int64_t at_min_k_threshold = 0;  // flowing CTAs whose k_threshold is min_k_threshold
  bool global = false;
  double lambda = kInf;
  double off = 0;
  double lam_ref = 0, t_ref = 0;
  double min_ready = kInf, min_finish = kInf, min_target = kInf;
  std::int64_t ready_slot = -1, finish_slot = -1, target_slot = -1;
  // Statistics, integrated lazily at each change of `resident`.
  double last_t = 0, busy = 0, resident_time = 0;
};

class KernelRun {
 public:
  KernelRun(const Device& device, const Launch& launch, const Occupancy& occ, std::size_t index,
            TraceSink* trace)
      : d_(device), launch_(launch), index_(index), trace_(trace) {
    const double ratio = std::max(1.0, launch.logical_per_dram_byte);
    global_cap_ = std::min(d_.dram_achievable_gbps * 1e3, d_.l2_bandwidth_gbps * 1e3 / ratio);
    sm_cap_ = d_.sm_bandwidth_cap_gbps * 1e3 / ratio;
    num_sms_ = d_.num_sms;
    occ_ = occ.ctas_per_sm;
    compute_rates_ = compute_rates(d_, launch);
    latency_rates_ = latency_rates(d_, launch);
  }

  /// Runs the launch from `t0` (us); returns the end time.
  double run(double t0, KernelResult& out) {
    t_ = t0;
    const auto S = static_cast<std::size_t>(num_sms_);
    const auto n = static_cast<std::int64_t>(launch_.ctas.size());
    sms_.assign(S, Sm{});
    slots_.assign(S * static_cast<std::size_t>(occ_), Slot{});
    residents_.assign(S * static_cast<std::size_t>(occ_), Resident{});
    caps_.assign(S * static_cast<std::size_t>(occ_), 0.0);
    order_.assign(S * static_cast<std::size_t>(occ_), 0);
    prefix_.assign(S * static_cast<std::size_t>(occ_ + 1), 0.0);
    for (auto* v : {&real_next_, &vkey_, &a_, &b_, &u_, &lo_}) v->assign(S, 0.0);
    hi_.assign(S, kInf);
    vkey_.assign(S, kInf);
    for (std::int64_t s = 0; s < num_sms_; ++s) {
      sm(s).first_slot = s * occ_;
      sm(s).last_t = t0;
    }
    // The first wave: round-robin over the SMs, one CTA per SM per round.
    for (std::int64_t round = 0; round < occ_ && next_cta_ < n; ++round)
      for (std::int64_t s = 0; s < num_sms_ && next_cta_ < n; ++s) dispatch(s, sm(s).first_slot + round);
    for (std::int64_t s = 0; s < num_sms_; ++s) refresh(s);
    emit_counters();

    double end = t0;
    while (true) {
      // Simultaneous events are served one SM at a time in cyclic order after the last SM served:
      // when identical CTAs finish together, their successors spread over the SMs as in the first
      // wave instead of filling the lowest-numbered SM's slots first.
      double best_real = kInf, best_virt = kInf;
      const std::int64_t s_real = earliest_sm(real_next_, best_real, kSimultaneousUs);
      std::int64_t s_virt = -1;
      double t_virt = kInf;
      if (level_ != kInf) {  // else no CTA streams at the global level
        // Exactly, as before: these keys are levels, not times (kSimultaneousUs does not apply),
        // and on them the brute-force reference of test_sim_engine agrees with exact ties.
        s_virt = earliest_sm(vkey_, best_virt, 0.0);
        if (s_virt >= 0) t_virt = t_ + std::max(best_virt - lam_g_, 0.0) / level_;
      }
      std::int64_t next = s_real;
      double t = best_real;
      if (t_virt < best_real) {
        next = s_virt;
        t = t_virt;
      }
      if (next < 0) break;
      advance(std::max(t, t_));
      handle(next);
      last_sm_ = next;
      end = t_;
      emit_counters();
    }
    for (auto& m : sms_) account(m);

    out.events = events_;
    out.dram_bytes = bytes_moved_;
    out.start_us = t0;
    out.end_us = end;
    out.busy_us = end - t0;
    double busy = 0, resident_time = 0;
    for (const auto& m : sms_) {
      busy += m.busy;
      resident_time += m.resident_time;
    }
    if (out.busy_us > 0) {
      out.achieved_gbps = bytes_moved_ / out.busy_us * 1e-3;
      out.sm_utilisation = busy / (static_cast<double>(num_sms_) * out.busy_us);
      out.mean_occupancy = resident_time / (static_cast<double>(num_sms_ * occ_) * out.busy_us);
    }
    return end;
  }

 private:
  Sm& sm(std::int64_t s) { return sms_[static_cast<std::size_t>(s)]; }
  Slot& slot(std::int64_t i) { return slots_[static_cast<std::size_t>(i)]; }
  double* caps(std::int64_t s) { return caps_.data() + s * occ_; }
  std::int64_t* order(std::int64_t s) { return order_.data() + s * occ_; }
  double* prefix(std::int64_t s) { return prefix_.data() + s * (occ_ + 1); }

  /// The SM with the smallest `key` below `best` (into `best`), -1 if none. Keys within `tie` of
  /// the smallest are simultaneous: of those, the first SM cyclically after the last one served,
  /// so that simultaneous events go round the SMs whatever rounding separates their times.
  std::int64_t earliest_sm(const std::vector<double>& key, double& best, double tie) const {
    double smallest = best;
    for (const double k : key) smallest = std::min(smallest, k);
    if (!(smallest < best)) return -1;
    const double within = smallest + tie;
    const auto scan = [&](std::int64_t from, std::int64_t to) -> std::int64_t {
      for (std::int64_t s = from; s < to; ++s)
        if (key[static_cast<std::size_t>(s)] <= within) return s;
      return -1;
    };
    std::int64_t at = scan(last_sm_ + 1, num_sms_);
    if (at < 0) at = scan(0, last_sm_ + 1);
    best = key[static_cast<std::size_t>(at)];
    return at;
  }

  /// Lambda_s now.
  double lam_at(const Sm& m) const {
    if (m.global) return lam_g_ + m.off;
    return m.lambda == kInf ? m.lam_ref : m.lam_ref + m.lambda * (t_ - m.t_ref);
  }
  /// lambda_s now.
  double level_of(const Sm& m) const { return m.global ? level_ : m.lambda; }

  void set_local(Sm& m, double lambda) {
    const double now = lam_at(m);
    m.global = false;
    m.lambda = lambda;
    m.lam_ref = now;
    m.t_ref = t_;
  }
  void set_global(Sm& m) {
    const double now = lam_at(m);
    m.global = true;
    m.off = now - lam_g_;
  }

  void account(Sm& m) {
    const double dt = t_ - m.last_t;
    if (m.resident > 0) m.busy += dt;
    m.resident_time += static_cast<double>(m.resident) * dt;
    m.last_t = t_;
  }

  void advance(double t) {
    const double dt = t - t_;
    if (dt > 0) {
      if (level_ != kInf) lam_g_ += level_ * dt;
      bytes_moved_ += total_rate_ * dt;
    }
    t_ = t;
  }

  /// The costs of CTA next_cta_, whose work is w: the previous CTA's when its work is the same.
  const CtaCosts& costs_of(const CtaWork& w) {
    const CtaWork* last = last_costs_.work;
    if (last != nullptr && w.dram_bytes == last->dram_bytes && w.flops == last->flops &&
        w.warp_instructions == last->warp_instructions && w.iterations == last->iterations &&
        w.busiest_warp_instructions == last->busiest_warp_instructions)
      return last_costs_;
    CtaCosts& c = last_costs_;
    c = CtaCosts{};
    c.work = &w;
    c.cost_class = next_cta_;
    c.compute_us = cta_compute_us(compute_rates_, w);
    c.latency_us = cta_latency_us(latency_rates_, w);
    c.base_cap = std::min(sm_cap_, c.latency_us > 0 ? w.dram_bytes / c.latency_us : kInf);
    if (c.compute_us > 0 && w.dram_bytes > 0) c.k_threshold = w.dram_bytes / (c.compute_us * c.base_cap);
    return c;
  }

  void dispatch(std::int64_t s, std::int64_t slot_index) {
    Sm& m = sm(s);
    account(m);
    Slot& sl = slot(slot_index);
    const CtaWork& w = launch_.ctas[static_cast<std::size_t>(next_cta_)];
    const CtaCosts& costs = costs_of(w);
    sl = Slot{};
    residents_[static_cast<std::size_t>(slot_index)] = {next_cta_++, t_, costs.cost_class};
    sl.bytes = w.dram_bytes;
    sl.compute_us = costs.compute_us;
    sl.base_cap = costs.base_cap;
    sl.k_threshold = costs.k_threshold;
    sl.ready_t = t_ + d_.cta_dispatch_overhead_us;
    // A CTA that moves no bytes only pays its latency and arithmetic, alone on its SM's units.
    if (w.dram_bytes <= 0) sl.ready_t += costs.latency_us + sl.compute_us;
    ++m.resident;
    ++events_;
  }

  void complete(std::int64_t s, std::int64_t slot_index) {
    Sm& m = sm(s);
    account(m);
    Slot& sl = slot(slot_index);
    if (trace_ != nullptr) {
      const Resident& r = residents_[static_cast<std::size_t>(slot_index)];
      trace_->cta(index_, s, slot_index - m.first_slot, r.start_t, t_,
                  launch_.ctas[static_cast<std::size_t>(r.cta)]);
    }
    sl = Slot{};
    --m.resident;
    ++events_;
    if (next_cta_ < static_cast<std::int64_t>(launch_.ctas.size())) dispatch(s, slot_index);
  }

  void handle(std::int64_t s) {
    Sm& m = sm(s);
    double t_level = kInf;
    const double lam = level_of(m);
    if (m.min_target != kInf && lam != kInf && lam > 0)
      t_level = t_ + std::max(m.min_target - lam_at(m), 0.0) / lam;
    if (m.min_ready == kInf && m.min_finish == kInf && t_level == kInf) {  // nothing left here
      real_next_[static_cast<std::size_t>(s)] = vkey_[static_cast<std::size_t>(s)] = kInf;
      return;
    }
    if (m.min_ready <= m.min_finish && m.min_ready <= t_level) {
      const std::int64_t i = m.ready_slot;
      if (slot(i).bytes > 0) {
        slot(i).ready_t = kInf;
        ++events_;
        insert_flow(s, i);
        after_flow_change(s);
      } else {
        complete(s, i);
        refresh(s);
      }
      return;
    }
    const std::int64_t i = m.min_finish <= t_level ? m.finish_slot : m.target_slot;
    remove_flow(s, i);
    complete(s, i);
    after_flow_change(s);
  }

  /// u_i while `computing` CTAs share the SM's arithmetic and issue: the base cap until more than
  /// k_threshold of them compute (kInf for a CTA without arithmetic or instructions), then the
  /// lower of it and the CTA's share, bytes / (computing x compute_us).
  static double cap_with(const Slot& sl, double computing) {
    return computing <= sl.k_threshold ? sl.base_cap
                                       : std::min(sl.base_cap, sl.bytes / (computing * sl.compute_us));
  }

  /// Gives a flowing CTA with `rem` bytes left a state valid now: capped if its sorted position is
  /// inside the capped prefix, else at the level.
  void place(const Sm& m, Slot& sl, double rem, bool capped) {
    if (capped) {
      sl.finish_t = t_ + rem / sl.cap;
      sl.target = kInf;
    } else {
      sl.target = lam_at(m) + rem;
      sl.finish_t = kInf;
    }
  }

  void recompute_sums(std::int64_t s, std::int64_t from) {
    Sm& m = sm(s);
    double* c = caps(s);
    double* p = prefix(s);
    for (std::int64_t j = from; j < m.k; ++j) p[j + 1] = p[j] + c[j];
    m.mu = kInf;
    if (m.k > 0 && p[m.k] > sm_cap_) {
      for (std::int64_t j = 0; j < m.k; ++j) {
        const double level = (sm_cap_ - p[j]) / static_cast<double>(m.k - j);
        if (level <= c[j]) {
          m.mu = std::max(level, 0.0);
          break;
        }
      }
    }
  }

  /// Counts a flowing CTA's k_threshold into its SM's minimum. The count of CTAs at the minimum
  /// spares remove_flow() a rescan of the SM's CTAs unless the last of them leaves.
  static void add_k_threshold(Sm& m, double k_threshold) {
    if (k_threshold < m.min_k_threshold) {
      m.min_k_threshold = k_threshold;
      m.at_min_k_threshold = 1;
    } else if (k_threshold == m.min_k_threshold) {
      ++m.at_min_k_threshold;
    }
  }

  void insert_flow(std::int64_t s, std::int64_t i) {
    Sm& m = sm(s);
    Slot& sl = slot(i);
    const std::int64_t cost_class = residents_[static_cast<std::size_t>(i)].cost_class;
    if (m.k == 0) {
      m.uniform_class = cost_class;
      m.n_uniform = 0;
    }
    if (cost_class == m.uniform_class) ++m.n_uniform;
    const std::int64_t computing = m.computing + (sl.compute_us > 0 ? 1 : 0);
    const bool caps_unchanged = static_cast<double>(computing) <= std::min(m.min_k_threshold, sl.k_threshold);
    m.computing = computing;
    add_k_threshold(m, sl.k_threshold);
    sl.cap = sl.base_cap;
    if (!caps_unchanged) {
      // Among identical CTAs, which share a cap, the order is by slot: start the CTA there, so
      // that rebuild() usually finds the order kept (any other order it sorts).
      std::int64_t* o = order(s);
      std::int64_t p = m.k;
      for (; p > 0 && o[p - 1] > i; --p) o[p] = o[p - 1];
      o[p] = i;
      ++m.k;
      rebuild(s);
      return;
    }
    double* c = caps(s);
    std::int64_t* o = order(s);
    std::int64_t p = 0;
    while (p < m.k && (c[p] < sl.cap || (c[p] == sl.cap && o[p] < i))) ++p;
    for (std::int64_t j = m.k; j > p; --j) {
      c[j] = c[j - 1];
      o[j] = o[j - 1];
    }
    c[p] = sl.cap;
    o[p] = i;
    ++m.k;
    const bool capped = p <= m.n_capped;
    if (capped) ++m.n_capped;
    place(m, sl, sl.bytes, capped);
    recompute_sums(s, p);
  }

  void remove_flow(std::int64_t s, std::int64_t i) {
    Sm& m = sm(s);
    const Slot& sl = slot(i);
    const bool caps_were_base = static_cast<double>(m.computing) <= m.min_k_threshold;
    m.computing -= sl.compute_us > 0 ? 1 : 0;
    if (residents_[static_cast<std::size_t>(i)].cost_class == m.uniform_class) --m.n_uniform;
    double* c = caps(s);
    std::int64_t* o = order(s);
    std::int64_t p = 0;
    while (o[p] != i) ++p;
    for (std::int64_t j = p; j + 1 < m.k; ++j) o[j] = o[j + 1];
    --m.k;
    if (p < m.n_capped) --m.n_capped;
    if (sl.k_threshold == m.min_k_threshold && --m.at_min_k_threshold == 0) {
      m.min_k_threshold = kInf;  // the last CTA at the minimum left: rescan the others
      for (std::int64_t j = 0; j < m.k; ++j) add_k_threshold(m, slot(o[j]).k_threshold);
    }
    if (caps_were_base) {
      for (std::int64_t j = p; j < m.k; ++j) c[j] = c[j + 1];
      recompute_sums(s, p);
    } else {
      rebuild(s);  // the arithmetic share of the others grew: it recomputes every cap
    }
  }

  /// Recomputes every cap on SM s (the arithmetic share changed), re-sorts, and gives every CTA a
  /// capped state valid now; after_flow_change() then moves the boundary to the level.
  void rebuild(std::int64_t s) {
    const Sm& m = sm(s);
    const double computing = static_cast<double>(m.computing);
    if (m.k > 0 && m.n_uniform == m.k) {  // one cost class: one cap, computed once
      const double cap = cap_with(slot(order(s)[0]), computing);
      rebuild_with<true>(s, [cap](const Slot&) { return cap; });
    } else {
      rebuild_with<false>(s, [computing](const Slot& sl) { return cap_with(sl, computing); });
    }
  }

  /// rebuild() with each flowing CTA's new cap from cap_of(slot); kOneCap: the same for all, so
  /// the CTAs are in order when their slots are (one integer test, not two floating-point ones).
  template <bool kOneCap, class CapOf>
  void rebuild_with(std::int64_t s, CapOf cap_of) {
    Sm& m = sm(s);
    const std::int64_t k = m.k;
    std::int64_t* o = order(s);
    double* c = caps(s);
    double* p = prefix(s);
    const double now = t_, lam = lam_at(m);
    // Caps [0, in_order) are in order and their prefix sums done. Identical CTAs keep their order,
    // so this pass usually leaves the sort and the sums nothing to do. The loop is the engine's
    // hottest: each test it spares counts.
    std::int64_t in_order = k;
    double previous_cap = -kInf, sum = 0;
    std::int64_t previous_slot = -1;
    p[0] = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      Slot& sl = slot(o[j]);
      // The bytes it still has to move; a CTA inserted this event is neither capped nor at the
      // level yet and has all of them.
      double rem = sl.bytes;
      if (sl.capped()) {
        rem = std::max((sl.finish_t - now) * sl.cap, 0.0);
      } else if (sl.target != kInf) {
        rem = std::max(sl.target - lam, 0.0);
        sl.target = kInf;
      }
      const double cap = cap_of(sl);
      sl.cap = cap;
      sl.finish_t = now + rem / cap;
      c[j] = cap;
      if (in_order == k) {
        if (kOneCap ? previous_slot < o[j] : cap_order(previous_cap, previous_slot, cap, o[j])) {
          sum += cap;
          p[j + 1] = sum;
        } else {
          in_order = j;
        }
      }
      previous_cap = cap;
      previous_slot = o[j];
    }
    m.n_capped = k;
    recompute_sums(s, sort_by_cap(c, o, k, in_order));
  }

  /// Moves SM s to the mode and capped/level boundary that the global level L implies.
  void apply_level(std::int64_t s, double L) {
    Sm& m = sm(s);
    if (L != kInf && m.mu >= L) {
      if (!m.global) set_global(m);
    } else if (m.global || m.lambda != m.mu) {
      set_local(m, m.mu);
    }
    const double lam = level_of(m);
    const double* c = caps(s);
    const std::int64_t* o = order(s);
    const std::int64_t n_new = lam == kInf ? m.k : std::upper_bound(c, c + m.k, lam) - c;
    for (std::int64_t j = m.n_capped; j < n_new; ++j) {  // level -> capped
      Slot& sl = slot(o[j]);
      place(m, sl, std::max(sl.target - lam_at(m), 0.0), true);
    }
    for (std::int64_t j = n_new; j < m.n_capped; ++j) {  // capped -> level
      Slot& sl = slot(o[j]);
      place(m, sl, std::max((sl.finish_t - t_) * sl.cap, 0.0), false);
    }
    m.n_capped = n_new;
  }

  /// Caches SM s's next events and its share of the global sums.
  void refresh(std::int64_t s) {
    Sm& m = sm(s);
    m.min_ready = m.min_finish = m.min_target = kInf;
    // A slot's times are kInf outside their phase and state, so no branch on either: the scan
    // runs on every event.
    for (std::int64_t i = m.first_slot; i < m.first_slot + occ_; ++i) {
      const Slot& sl = slot(i);
      if (sl.ready_t < m.min_ready) {
        m.min_ready = sl.ready_t;
        m.ready_slot = i;
      }
      if (sl.finish_t < m.min_finish) {
        m.min_finish = sl.finish_t;
        m.finish_slot = i;
      }
      if (sl.target < m.min_target) {
        m.min_target = sl.target;
        m.target_slot = i;
      }
    }
    const auto u = static_cast<std::size_t>(s);
    double real = std::min(m.min_ready, m.min_finish);
    if (!m.global && m.lambda != kInf && m.lambda > 0 && m.min_target != kInf)
      real = std::min(real, t_ + std::max(m.min_target - lam_at(m), 0.0) / m.lambda);
    real_next_[u] = real;
    vkey_[u] = m.global && m.min_target != kInf ? m.min_target - m.off : kInf;
    const double* p = prefix(s);
    const double* c = caps(s);
    u_[u] = m.k == 0 ? 0.0 : std::min(p[m.k], sm_cap_);
    if (m.k == 0) {
      a_[u] = b_[u] = lo_[u] = 0;
      hi_[u] = kInf;
    } else if (m.global) {
      a_[u] = p[m.n_capped];
      b_[u] = static_cast<double>(m.k - m.n_capped);
      lo_[u] = m.n_capped > 0 ? c[m.n_capped - 1] : 0.0;
      hi_[u] = std::min(m.n_capped < m.k ? c[m.n_capped] : kInf, m.mu);
    } else {
      a_[u] = m.lambda == kInf ? p[m.k] : sm_cap_;
      b_[u] = 0;
      lo_[u] = m.mu;
      hi_[u] = kInf;
    }
  }

  struct LevelEval {
    double value, slope_right, slope_left;
  };

  LevelEval evaluate(double level) {
    LevelEval e{-global_cap_, 0, 0};
    for (std::int64_t s = 0; s < num_sms_; ++s) {
      const Sm& m = sm(s);
      if (m.k == 0) continue;
      const double* c = caps(s);
      const double* p = prefix(s);
      const double x = std::min(level, m.mu);
      const std::int64_t j = std::upper_bound(c, c + m.k, x) - c;
      e.value += p[j] + static_cast<double>(m.k - j) * x;
      if (level < m.mu) e.slope_right += static_cast<double>(m.k - (std::upper_bound(c, c + m.k, level) - c));
      if (level <= m.mu) e.slope_left += static_cast<double>(m.k - (std::lower_bound(c, c + m.k, level) - c));
    }
    return e;
  }

  /// The global level L: sum_s h_s(min(L, mu_s)) = global cap. The left-hand side is concave and
  /// piecewise linear in L, so Newton's method from the left of the root converges monotonically,
  /// one segment per step.
  double solve_level(double start) {
    std::int64_t flowing = 0;
    for (const auto& m : sms_) flowing += m.k;
    double level = start != kInf && start > 0
                       ? start
                       : global_cap_ / static_cast<double>(std::max<std::int64_t>(flowing, 1));
    for (int iter = 0; iter < 200; ++iter) {
      const LevelEval e = evaluate(level);
      if (std::fabs(e.value) <= 1e-12 * global_cap_) break;
      if (e.value < 0) {
        if (e.slope_right <= 0) break;
        const double next = level - e.value / e.slope_right;
        if (!(next > level)) break;
        level = next;
      } else {
        if (e.slope_left <= 0) {
          level *= 0.5;
          continue;
        }
        const double next = level - e.value / e.slope_left;
        if (!(next < level)) break;
        level = std::max(next, 0.0);
      }
    }
    return level;
  }

  /// A per-SM quantity summed over the SMs in index order (the order fixes the rounding).
  static double sum_over_sms(const std::vector<double>& per_sm) {
    double sum = 0;
    for (const double x : per_sm) sum += x;
    return sum;
  }

  /// After the flowing set of SM s changed: the new global level. Fast path: the other SMs keep
  /// their modes and boundaries, so L = (G - A) / B from the per-SM sums, checked against every
  /// SM's bounds; otherwise a full solve and every SM re-levelled.
  void after_flow_change(std::int64_t s) {
    apply_level(s, level_);
    refresh(s);
    const double U = sum_over_sms(u_);
    double next = kInf;
    bool full = false;
    if (U <= global_cap_ * (1 + 1e-12)) {
      next = kInf;
      full = level_ != kInf;
    } else if (level_ == kInf) {
      full = true;
    } else if (const double B = sum_over_sms(b_); B <= 0) {
      full = true;
    } else {
      next = (global_cap_ - sum_over_sms(a_)) / B;
      const double tol = 1e-12 * next;
      for (std::size_t i = 0; i < static_cast<std::size_t>(num_sms_) && !full; ++i)
        full = lo_[i] > next + tol || hi_[i] < next - tol;
    }
    if (full) {
      if (U > global_cap_ * (1 + 1e-12)) next = solve_level(level_ != kInf ? level_ : next);
      level_ = next;
      for (std::int64_t i = 0; i < num_sms_; ++i) {
        apply_level(i, level_);
        refresh(i);
      }
    } else {
      level_ = next;
    }
    total_rate_ = level_ != kInf ? global_cap_ : U;
  }

  void emit_counters() {
    if (trace_ == nullptr) return;
    std::int64_t resident = 0;
    for (const auto& m : sms_) resident += m.resident;
    if (t_ == last_counter_t_ && total_rate_ == last_counter_rate_ && resident == last_counter_resident_)
      return;
    last_counter_t_ = t_;
    last_counter_rate_ = total_rate_;
    last_counter_resident_ = resident;
    trace_->counters(t_, total_rate_ * 1e-3, resident);
  }

  const Device& d_;
  const Launch& launch_;
  std::size_t index_;
  TraceSink* trace_;
  double global_cap_ = 0, sm_cap_ = 0;
  std::int64_t num_sms_ = 0, occ_ = 0;
  std::vector<Sm> sms_;
  std::vector<Slot> slots_;
  std::vector<Resident> residents_;  // by slot
  ComputeRates compute_rates_;
  LatencyRates latency_rates_;
  CtaCosts last_costs_;  // costs_of()'s memo
  std::vector<double> caps_, prefix_;
  std::vector<std::int64_t> order_;
  // Per SM, scanned every event: next real-time event, next level finish in Lambda_G units, and
  // the SM's share of the global sums and bounds (see refresh()).
  std::vector<double> real_next_, vkey_, a_, b_, u_, lo_, hi_;
  std::int64_t next_cta_ = 0;
  std::int64_t last_sm_ = -1;  // the SM whose event was served last (ties go to the next SM)
  double t_ = 0;
  double level_ = kInf;  // L
  double lam_g_ = 0;     // Lambda_G
  double total_rate_ = 0;
  double bytes_moved_ = 0;
  std::int64_t events_ = 0;
  double last_counter_t_ = -1, last_counter_rate_ = -1;
  std::int64_t last_counter_resident_ = -1;
};

}  // namespace

double cta_compute_us(const Device& device, const Launch& launch, const CtaWork& work) {
  return cta_compute_us(compute_rates(device, launch), work);
}

double cta_latency_us(const Device& device, const Launch& launch, const CtaWork& work) {
  return cta_latency_us(latency_rates(device, launch), work);
}

SimResult simulate(const Device& device, std::span<const Launch> launches, TraceSink* trace) {
  validate_device(device);
  SimResult result;
  double host = 0, prev_end = 0;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const Launch& launch = launches[i];
    KernelResult k;
    k.name = launch.name;
    k.ctas = static_cast<std::int64_t>(launch.ctas.size());
    k.occupancy = compute_occupancy(device, launch.resources);
    host += launch.host_issue_delay_us;
    k.issue_us = host;
    if (!k.occupancy.fits()) {
      result.ok = false;
      result.error = launch.name + ": " + k.occupancy.limiter;
      result.time_us = std::numeric_limits<double>::infinity();
      result.kernels.push_back(k);
      return result;
    }
    const double per_wave = static_cast<double>(k.occupancy.ctas_per_sm * device.num_sms);
    k.waves = static_cast<double>(k.ctas) / per_wave;
    k.full_waves = static_cast<std::int64_t>(std::ceil(k.waves));
    double start = host + device.launch_latency_us;
    if (i > 0) start = std::max(start, prev_end + device.inter_kernel_gap_us);
    KernelRun run(device, launch, k.occupancy, i, trace);
    const double end = run.run(start, k);
    const double issue_capacity =
        static_cast<double>(device.num_sms) * device.per_sm_issue_rate() * 1e-6 * k.busy_us;
    k.warp_instructions = launch.total_warp_instructions();
    for (const auto& cta : launch.ctas)
      k.max_cta_iterations = std::max<std::int64_t>(k.max_cta_iterations, cta.iterations);
    if (issue_capacity > 0) k.issue_utilisation = k.warp_instructions / issue_capacity;
    k.time_us = end - prev_end;
    prev_end = end;
    result.dram_bytes += k.dram_bytes;
    result.events += k.events;
    if (trace != nullptr) trace->kernel(k, device.num_sms, k.occupancy.ctas_per_sm);
    result.kernels.push_back(std::move(k));
  }
  result.time_us = prev_end;
  return result;
}

}  // namespace pao::sim

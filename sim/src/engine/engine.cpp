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

#include "pao/core/error.hpp"

namespace pao::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Phase : std::uint8_t { free, dispatching, flowing };

struct Slot {
  std::int64_t cta = -1;
  Phase phase = Phase::free;
  bool capped = false;
  double start_t = 0;
  double ready_t = kInf;  // dispatching: when the phase ends
  double bytes = 0;
  double base_cap = kInf;     // min(bytes / latency floor, per-SM cap), bytes/us
  double compute_us = 0;      // arithmetic and issue alone on the SM (cta_compute_us)
  double k_threshold = kInf;  // the arithmetic share binds when more CTAs than this compute
  double cap = 0;             // u_i
  double finish_t = kInf;     // capped: when the last byte arrives
  double target = kInf;       // level: the SM's Lambda at which the last byte arrives
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
  double mu = kInf;            // level at which this SM alone reaches its cap
  double min_k_threshold = kInf;
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
  }

  /// Runs the launch from `t0` (us); returns the end time.
  double run(double t0, KernelResult& out) {
    t_ = t0;
    const auto S = static_cast<std::size_t>(num_sms_);
    const auto n = static_cast<std::int64_t>(launch_.ctas.size());
    sms_.assign(S, Sm{});
    slots_.assign(S * static_cast<std::size_t>(occ_), Slot{});
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
      std::int64_t s_real = -1, s_virt = -1;
      double best_real = kInf, best_virt = kInf;
      for (std::int64_t j = 1; j <= num_sms_; ++j) {
        const std::int64_t s = (last_sm_ + j) % num_sms_;
        const double r = real_next_[static_cast<std::size_t>(s)];
        const double v = vkey_[static_cast<std::size_t>(s)];
        if (r < best_real) {
          best_real = r;
          s_real = s;
        }
        if (v < best_virt) {
          best_virt = v;
          s_virt = s;
        }
      }
      double t_virt = kInf;
      if (s_virt >= 0 && level_ != kInf) t_virt = t_ + std::max(best_virt - lam_g_, 0.0) / level_;
      std::int64_t s = s_real;
      double t = best_real;
      if (t_virt < best_real) {
        s = s_virt;
        t = t_virt;
      }
      if (s < 0) break;
      advance(std::max(t, t_));
      handle(s);
      last_sm_ = s;
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

  void dispatch(std::int64_t s, std::int64_t slot_index) {
    Sm& m = sm(s);
    account(m);
    Slot& sl = slot(slot_index);
    const CtaWork& w = launch_.ctas[static_cast<std::size_t>(next_cta_)];
    sl = Slot{};
    sl.cta = next_cta_++;
    sl.phase = Phase::dispatching;
    sl.start_t = t_;
    sl.bytes = w.dram_bytes;
    sl.compute_us = cta_compute_us(d_, launch_, w);
    const double latency = static_cast<double>(w.iterations) * d_.iteration_latency_us;
    sl.base_cap = std::min(sm_cap_, latency > 0 ? w.dram_bytes / latency : kInf);
    if (sl.compute_us > 0 && w.dram_bytes > 0) sl.k_threshold = w.dram_bytes / (sl.compute_us * sl.base_cap);
    sl.ready_t = t_ + d_.cta_dispatch_overhead_us;
    // A CTA that moves no bytes only pays its latency and arithmetic, alone on its SM's units.
    if (w.dram_bytes <= 0) sl.ready_t += latency + sl.compute_us;
    ++m.resident;
    ++events_;
  }

  void complete(std::int64_t s, std::int64_t slot_index) {
    Sm& m = sm(s);
    account(m);
    Slot& sl = slot(slot_index);
    if (trace_ != nullptr)
      trace_->cta(index_, s, slot_index - m.first_slot, sl.start_t, t_,
                  launch_.ctas[static_cast<std::size_t>(sl.cta)]);
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
        slot(i).phase = Phase::flowing;
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

  double cap_with(const Slot& sl, std::int64_t computing) const {
    if (sl.compute_us <= 0 || static_cast<double>(computing) <= sl.k_threshold) return sl.base_cap;
    return std::min(sl.base_cap, sl.bytes / (static_cast<double>(computing) * sl.compute_us));
  }

  /// Bytes a flowing CTA still has to move, now.
  double remaining(const Sm& m, const Slot& sl) const {
    const double r = sl.capped ? (sl.finish_t - t_) * sl.cap : sl.target - lam_at(m);
    return std::max(r, 0.0);
  }

  /// Gives a flowing CTA with `rem` bytes left a state valid now: capped if its sorted position is
  /// inside the capped prefix, else at the level.
  void place(const Sm& m, Slot& sl, double rem, bool capped) {
    sl.capped = capped;
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

  void insert_flow(std::int64_t s, std::int64_t i) {
    Sm& m = sm(s);
    Slot& sl = slot(i);
    const std::int64_t computing = m.computing + (sl.compute_us > 0 ? 1 : 0);
    const bool caps_unchanged = static_cast<double>(computing) <= std::min(m.min_k_threshold, sl.k_threshold);
    m.computing = computing;
    m.min_k_threshold = std::min(m.min_k_threshold, sl.k_threshold);
    sl.cap = sl.base_cap;
    if (!caps_unchanged) {
      ++m.k;
      order(s)[m.k - 1] = i;
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
    double* c = caps(s);
    std::int64_t* o = order(s);
    std::int64_t p = 0;
    while (o[p] != i) ++p;
    for (std::int64_t j = p; j + 1 < m.k; ++j) {
      c[j] = c[j + 1];
      o[j] = o[j + 1];
    }
    --m.k;
    if (p < m.n_capped) --m.n_capped;
    m.min_k_threshold = kInf;
    for (std::int64_t j = 0; j < m.k; ++j)
      m.min_k_threshold = std::min(m.min_k_threshold, slot(o[j]).k_threshold);
    if (caps_were_base) {
      recompute_sums(s, p);
    } else {
      rebuild(s);  // the arithmetic share of the others grew
    }
  }

  /// Recomputes every cap on SM s (the arithmetic share changed), re-sorts, and gives every CTA a
  /// capped state valid now; after_flow_change() then moves the boundary to the level.
  void rebuild(std::int64_t s) {
    Sm& m = sm(s);
    std::int64_t* o = order(s);
    double* c = caps(s);
    for (std::int64_t j = 0; j < m.k; ++j) {
      Slot& sl = slot(o[j]);
      // A CTA inserted this event has no state yet: all its bytes remain.
      const double rem = sl.finish_t == kInf && sl.target == kInf ? sl.bytes : remaining(m, sl);
      sl.cap = cap_with(sl, m.computing);
      sl.finish_t = t_ + rem / sl.cap;
      sl.target = kInf;
      sl.capped = true;
    }
    std::sort(o, o + m.k, [&](std::int64_t a, std::int64_t b) {
      const double ca = slot(a).cap, cb = slot(b).cap;
      return ca < cb || (ca == cb && a < b);
    });
    for (std::int64_t j = 0; j < m.k; ++j) c[j] = slot(o[j]).cap;
    m.n_capped = m.k;
    prefix(s)[0] = 0;
    recompute_sums(s, 0);
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
    for (std::int64_t i = m.first_slot; i < m.first_slot + occ_; ++i) {
      const Slot& sl = slot(i);
      if (sl.phase == Phase::dispatching) {
        if (sl.ready_t < m.min_ready) {
          m.min_ready = sl.ready_t;
          m.ready_slot = i;
        }
      } else if (sl.phase == Phase::flowing) {
        if (sl.capped) {
          if (sl.finish_t < m.min_finish) {
            m.min_finish = sl.finish_t;
            m.finish_slot = i;
          }
        } else if (sl.target < m.min_target) {
          m.min_target = sl.target;
          m.target_slot = i;
        }
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

  /// After the flowing set of SM s changed: the new global level. Fast path: the other SMs keep
  /// their modes and boundaries, so L = (G - A) / B from the per-SM sums, checked against every
  /// SM's bounds; otherwise a full solve and every SM re-levelled.
  void after_flow_change(std::int64_t s) {
    apply_level(s, level_);
    refresh(s);
    double U = 0, A = 0, B = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(num_sms_); ++i) {
      U += u_[i];
      A += a_[i];
      B += b_[i];
    }
    double next = kInf;
    bool full = false;
    if (U <= global_cap_ * (1 + 1e-12)) {
      next = kInf;
      full = level_ != kInf;
    } else if (level_ == kInf || B <= 0) {
      full = true;
    } else {
      next = (global_cap_ - A) / B;
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
  const double flops_per_us =
      (launch.compute == ComputeUnit::matrix_fp16 ? device.per_sm_fp16_flops() : device.per_sm_fp32_flops()) *
      1e-6;
  const double issue_per_us = device.per_sm_issue_rate() * 1e-6;
  const double arithmetic = work.flops > 0 && flops_per_us > 0 ? work.flops / flops_per_us : 0.0;
  const double issue =
      work.warp_instructions > 0 && issue_per_us > 0 ? work.warp_instructions / issue_per_us : 0.0;
  return std::max(arithmetic, issue);
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
    if (issue_capacity > 0) k.issue_utilisation = launch.total_warp_instructions() / issue_capacity;
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

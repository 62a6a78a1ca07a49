// Occupancy: how many CTAs of one kernel an SM holds at once, by the CUDA occupancy calculator's
// rule (threads rounded up to warps, registers allocated per warp in `register_alloc_unit`s,
// shared memory in `shared_alloc_unit_bytes` plus the per-CTA reservation), and which limit binds.
#pragma once

#include <cstdint>
#include <string>

#include "pao/sim/model/device.hpp"

namespace pao::sim {

/// What one CTA of a kernel asks of its SM.
struct CtaResources {
  std::int64_t threads = 128;
  std::int64_t registers_per_thread = 64;
  std::int64_t shared_bytes = 0;  // static + dynamic
};

struct Occupancy {
  std::int64_t ctas_per_sm = 0;  // 0: the CTA does not fit at all (see `limiter`)
  std::int64_t warps_per_cta = 0;
  std::int64_t by_warps = 0, by_threads = 0, by_registers = 0, by_shared = 0, by_cta_limit = 0;
  std::string limiter;  // "warps", "threads", "registers", "shared memory", "CTA limit", or why 0
  bool fits() const { return ctas_per_sm > 0; }
};

Occupancy compute_occupancy(const Device& device, const CtaResources& cta);

}  // namespace pao::sim

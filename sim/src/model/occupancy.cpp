// The occupancy-calculator rule: the binding limit among warps, threads, registers, shared memory
// and the CTA slots of an SM.
#include "pao/sim/model/occupancy.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "pao/plan/partition.hpp"

namespace pao::sim {

Occupancy compute_occupancy(const Device& d, const CtaResources& cta) {
  Occupancy o;
  if (cta.threads <= 0 || cta.threads > d.max_threads_per_cta) {
    std::ostringstream os;
    os << "does not fit: " << cta.threads << " threads per CTA, the device allows 1.."
       << d.max_threads_per_cta;
    o.limiter = os.str();
    return o;
  }
  if (cta.registers_per_thread > d.max_registers_per_thread) {
    std::ostringstream os;
    os << "does not fit: " << cta.registers_per_thread << " registers per thread, the device allows "
       << d.max_registers_per_thread;
    o.limiter = os.str();
    return o;
  }
  if (cta.shared_bytes > d.max_shared_per_cta_bytes) {
    std::ostringstream os;
    os << "does not fit: " << cta.shared_bytes << " bytes of shared memory per CTA, the device allows "
       << d.max_shared_per_cta_bytes;
    o.limiter = os.str();
    return o;
  }
  o.warps_per_cta = ceil_div<std::int64_t>(cta.threads, d.warp_size);
  constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();
  o.by_warps = d.max_warps_per_sm / o.warps_per_cta;
  o.by_threads = d.max_threads_per_sm / (o.warps_per_cta * d.warp_size);
  // Registers are allocated per warp, rounded up to the allocation unit.
  const std::int64_t regs_per_warp = round_up<std::int64_t>(
      std::max<std::int64_t>(cta.registers_per_thread, 1) * d.warp_size, d.register_alloc_unit);
  o.by_registers = (d.registers_per_sm / regs_per_warp) / o.warps_per_cta;
  const std::int64_t smem = cta.shared_bytes + d.shared_reserved_per_cta_bytes;
  o.by_shared = smem == 0 ? kUnlimited
                          : d.shared_per_sm_bytes / round_up<std::int64_t>(smem, d.shared_alloc_unit_bytes);
  o.by_cta_limit = d.max_ctas_per_sm;

  struct Limit {
    std::int64_t value;
    const char* name;
  };
  // Ties name the first limit in this order.
  const Limit limits[] = {{o.by_cta_limit, "CTA limit"},
                          {o.by_warps, "warps"},
                          {o.by_threads, "threads"},
                          {o.by_registers, "registers"},
                          {o.by_shared, "shared memory"}};
  Limit best = limits[0];
  for (const auto& l : limits)
    if (l.value < best.value) best = l;
  o.ctas_per_sm = best.value;
  o.limiter = best.name;
  if (o.ctas_per_sm == 0) o.limiter = std::string("does not fit: ") + best.name + " of one SM exceeded";
  return o;
}

}  // namespace pao::sim

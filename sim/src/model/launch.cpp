// Totals over a launch's CTAs.
#include "pao/sim/model/launch.hpp"

namespace pao::sim {

double Launch::total_dram_bytes() const {
  double sum = 0;
  for (const auto& c : ctas) sum += c.dram_bytes;
  return sum;
}

double Launch::total_flops() const {
  double sum = 0;
  for (const auto& c : ctas) sum += c.flops;
  return sum;
}

double Launch::total_warp_instructions() const {
  double sum = 0;
  for (const auto& c : ctas) sum += c.warp_instructions;
  return sum;
}

}  // namespace pao::sim

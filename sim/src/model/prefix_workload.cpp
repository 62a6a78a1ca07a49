// Per-CTA work of the prefix kernel over the lib's prefix plan.
#include "pao/sim/model/prefix_workload.hpp"

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/plan/partition.hpp"
#include "pao/sim/model/occupancy.hpp"

namespace pao::sim {

PrefixPlan prefix_plan(const Workload& w, const KernelConfig& k) {
  PrefixShape shape;
  static_cast<LaunchShape&>(shape) = w;
  static_cast<KernelTuning&>(shape) = k;
  std::vector<std::int32_t> query_lens = w.query_lens;
  if (query_lens.empty()) query_lens.assign(w.seq_lens.size(), 1);
  return plan_prefix(shape, w.seq_lens, query_lens);
}

std::vector<Launch> prefix_launches(const Device& device, const Workload& w, const KernelConfig& k) {
  const PrefixPlan plan = prefix_plan(w, k);
  const double act = static_cast<double>(dtype_size(w.dtype));
  const double kv = kv_bytes_per_element(w);
  const double row_bytes = w.head_size * act;
  Launch launch;
  launch.name = "context_attention_fwd";
  launch.compute = ComputeUnit::matrix_fp16;
  launch.resources.threads = static_cast<std::int64_t>(k.prefix_warps) * device.warp_size;
  launch.resources.registers_per_thread = k.registers_per_thread > 0 ? k.registers_per_thread : 128;
  // A K tile and a V tile staged in shared memory for the dot products.
  launch.resources.shared_bytes =
      static_cast<std::int64_t>(2.0 * std::max(k.block_n, k.context_tile) * w.head_size * act);
  const std::int64_t group = plan.num_queries_per_kv();
  const Occupancy occ = compute_occupancy(device, launch.resources);
  const bool group_shares = group > 1 && occ.fits() &&
                            static_cast<std::int64_t>(w.num_seqs) * group <= occ.ctas_per_sm * device.num_sms;
  const double kv_share = group_shares ? 1.0 / static_cast<double>(group) : 1.0;
  double kv_dram_total = 0;
  launch.ctas.reserve(plan.ctas.size());
  for (const auto& c : plan.ctas) {
    CtaWork work;
    work.seq = c.seq;
    work.head = c.head;
    work.partition = c.m_tile;
    const double context_blocks = blocks_for_tokens(c.ctx_len, w.block_size);
    const double context_kv =
        2.0 * static_cast<double>(c.context_keys) * w.head_size * kv + context_blocks * 4.0;
    const double new_kv = 2.0 * static_cast<double>(c.new_keys) * row_bytes;
    const double kv_bytes = (c.num_context_tiles > 0 ? context_kv : 0.0) + new_kv;
    work.dram_bytes = 2.0 * c.num_rows() * row_bytes + kv_bytes * kv_share;
    kv_dram_total += kv_bytes * kv_share;
    // Every tile is computed in full, BLOCK_M rows by its width (masked rows and keys included).
    double keys = 0;
    for (const auto& t : plan.tiles_of(c)) keys += t.width;
    work.flops = 4.0 * k.block_m * keys * w.head_size;
    work.iterations = c.num_tiles() > 0 ? c.num_tiles() + 1 : 0;
    launch.ctas.push_back(work);
  }
  if (group_shares && launch.total_dram_bytes() > 0) {
    const double dram = launch.total_dram_bytes();
    launch.logical_per_dram_byte = (dram + kv_dram_total * static_cast<double>(group - 1)) / dram;
  }
  return {std::move(launch)};
}

}  // namespace pao::sim

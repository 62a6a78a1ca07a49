// The host-loop framework fallback as a chain of small kernel launches (see fallback_model.hpp).
#include "pao/sim/model/fallback_model.hpp"

#include <algorithm>
#include <cmath>

#include "pao/plan/partition.hpp"
#include "pao/sim/model/kernel_model.hpp"

namespace pao::sim {
namespace {

constexpr double kElementsPerCta = 1024.0;  // 256 threads x 4 elements

/// One framework op: `elements` output elements, `bytes` moved, `flops`, spread evenly over CTAs.
Launch op(const Device& device, const char* name, double elements, double bytes, double flops,
          std::int32_t iterations) {
  Launch l;
  l.name = name;
  l.resources.threads = 256;
  l.resources.registers_per_thread = kFallbackRegisters;
  l.resources.shared_bytes = 0;
  l.host_issue_delay_us = device.host_op_overhead_us;
  const auto n = static_cast<std::size_t>(std::max(1.0, std::ceil(elements / kElementsPerCta)));
  l.ctas.assign(
      n, CtaWork{bytes / static_cast<double>(n), flops / static_cast<double>(n), iterations, -1, -1, -1, 0});
  return l;
}

}  // namespace

std::vector<Launch> fallback_launches(const Device& device, const Workload& w, const KernelConfig& k) {
  const double act = static_cast<double>(dtype_size(w.dtype));
  const double kv = kv_bytes_per_element(w);
  const double seqs = w.num_seqs, heads = w.num_heads, kv_heads = w.num_kv_heads, hs = w.head_size;
  double q = 1;
  for (std::size_t s = 0; s < w.seq_lens.size(); ++s) q = std::max(q, static_cast<double>(w.query_len(s)));
  const std::int32_t max_len = w.effective_max_seq_len();
  const std::int32_t tiles = std::max(1, ceil_div(max_len, k.fallback_tile));
  // Whole cache blocks are gathered: a tile rounds up to blocks, and is no longer than the longest
  // sequence (rounded up to blocks).
  const std::int32_t tile = std::min(k.fallback_tile, std::max(max_len, 1));
  const double T = round_up(tile, w.block_size);

  const double kv_tile_elems = seqs * T * kv_heads * hs;
  const double score_elems = seqs * heads * q * T;
  const double row_elems = seqs * heads * q;
  const double acc_elems = seqs * heads * q * hs;

  std::vector<Launch> launches;
  for (std::int32_t t = 0; t < tiles; ++t) {
    // Gathers read the cache (dequantising fp8) and write contiguous activations.
    launches.push_back(op(device, "gather_k", kv_tile_elems,
                          kv_tile_elems * (kv + act) + seqs * T / w.block_size * 4, 0, 2));
    launches.push_back(op(device, "gather_v", kv_tile_elems,
                          kv_tile_elems * (kv + act) + seqs * T / w.block_size * 4, 0, 2));
    launches.push_back(op(device, "qk_matmul", score_elems,
                          acc_elems * act + kv_tile_elems * act + score_elems * 4, 2.0 * score_elems * hs,
                          static_cast<std::int32_t>(std::ceil(hs / 32))));
    launches.push_back(op(device, "scale_mask", score_elems, 2 * score_elems * 4, score_elems, 1));
    launches.push_back(op(device, "tile_max", row_elems, score_elems * 4 + row_elems * 4, score_elems, 2));
    launches.push_back(op(device, "new_max", row_elems, 3 * row_elems * 4, row_elems, 1));
    launches.push_back(
        op(device, "exp", score_elems, 2 * score_elems * 4 + row_elems * 4, 2 * score_elems, 1));
    launches.push_back(op(device, "row_sum", row_elems, score_elems * 4 + row_elems * 4, score_elems, 2));
    launches.push_back(op(device, "rescale", row_elems, 4 * row_elems * 4, 4 * row_elems, 1));
    launches.push_back(op(device, "pv_matmul", acc_elems,
                          score_elems * 4 + kv_tile_elems * act + acc_elems * 4, 2.0 * score_elems * hs,
                          static_cast<std::int32_t>(std::ceil(T / 32))));
    launches.push_back(
        op(device, "acc_update", acc_elems, 3 * acc_elems * 4 + row_elems * 4, 2 * acc_elems, 1));
  }
  launches.push_back(
      op(device, "finalize", acc_elems, acc_elems * 4 + row_elems * 4 + acc_elems * act, acc_elems, 1));
  return launches;
}

}  // namespace pao::sim

// The framework fallback: attention written as eager framework ops in a host loop over K tiles of
// `fallback_tile` tokens (what a port ships when no native kernel exists). Every op is its own
// kernel launch that pays the host's per-op cost and the launch latency; its work is spread over
// CTAs of 1024 elements. Per tile (tensors padded to the tile, as a batched framework op does):
//   gather_k, gather_v      index_select of the tile's blocks into contiguous K/V (read + write)
//   qk_matmul               scores[s, h, q, T] = Q . K^T              (fp32 scores)
//   scale_mask              scores = where(mask, scores * scale, -inf)
//   tile_max, new_max       m_new = max(m_old, rowmax(scores))
//   exp                     p = exp(scores - m_new)
//   row_sum, rescale        l = l * exp(m_old - m_new) + rowsum(p)
//   pv_matmul               o_tile = p . V
//   acc_update              acc = acc * alpha + o_tile
// and after the loop one `finalize` (out = acc / l, cast to dtype).
#pragma once

#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/launch.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

inline constexpr int kFallbackOpsPerTile = 11;

std::vector<Launch> fallback_launches(const Device& device, const Workload& workload,
                                      const KernelConfig& kernel);

}  // namespace pao::sim

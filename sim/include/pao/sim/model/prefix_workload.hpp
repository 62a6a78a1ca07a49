// The prefix (chunked-prefill) kernel as the engine sees it: per-CTA work over the lib's prefix plan
// (pao::plan_prefix, vLLM's context_attention_fwd grid and K tiles); nothing here re-derives the
// tiling.
//
// DRAM bytes of CTA (seq, head, m_tile): its q and out rows, the K/V of its context tiles (cache
// dtype) with their block-table entries, and the K/V of its new-token tiles (activation dtype).
// A CTA with no query rows (vLLM sizes the grid by the longest query) stores nothing but still
// walks the whole context, so it is charged for it. The heads of a GQA group read their K/V from
// DRAM once when num_seqs x group CTAs fit in one wave (they are num_seqs apart in grid order);
// query tiles of a sequence are a whole grid slice apart and get no such credit, so a long chunk
// re-reads its context once per tile.
#pragma once

#include <vector>

#include "pao/plan/prefix_plan.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/launch.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// The lib's prefix plan for this workload (query_lens default to 1 token per sequence).
PrefixPlan prefix_plan(const Workload& workload, const KernelConfig& kernel);

/// The prefix kernel as one launch.
std::vector<Launch> prefix_launches(const Device& device, const Workload& workload,
                                    const KernelConfig& kernel);

}  // namespace pao::sim

// Instruction counts of vLLM's decode kernels (csrc/attention/attention_kernels.cuh), derived from
// the kernel's structure: the thread geometry (pao/kernels/decode_geometry.hpp: thread groups of
// max(warp_size / block_size, 1) lanes, K vectors of 16 bytes per group, V vectors of
// min(16 / sizeof(scalar_t), block_size) tokens), the head size, the block size and the warps of a
// CTA. Every lane of a warp runs the same instruction, so a count per lane is a count of warp
// instructions; a CTA's total is charged against the SM's issue rate (schedulers x clock x
// issue_efficiency) by the engine. The per-operation costs are the instruction classes of the
// kernel's inner loops (a load, an FMA, a conversion of a 16-bit or fp8 element to fp32, a shuffle),
// one instruction each; what compilers fuse or split is left to the fitted issue_efficiency.
#pragma once

#include "pao/plan/decode_plan.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// Warp instructions of one decode CTA's phases, per unit of its work.
struct DecodeInstructionCost {
  double qk_per_block = 0;       // one warp's Q·K over one cache block (its tokens' logits)
  double pv_per_block = 0;       // one warp's P·V over one cache block (all head rows)
  double softmax_per_round = 0;  // all warps' exp, sum and normalisation of `threads` logits
  double per_cta = 0;            // q load, the CTA's reductions, the output (and V2's statistics)
  std::int32_t threads = 0;      // logits per softmax round: one per lane of the CTA
};

/// The costs for a workload's shapes and dtypes on a plan's geometry (warp size, threads per CTA).
DecodeInstructionCost decode_instruction_cost(const Workload& workload, const DecodePlan& plan);

/// Warp instructions of one attention CTA: every loaded block once (the warps split the blocks),
/// the softmax over the CTA's tokens, the fixed part. 0 for an empty V2 partition.
double decode_cta_warp_instructions(const DecodeInstructionCost& cost, const Workload& workload,
                                    const AttentionCta& cta);

/// Warp instructions of one V2 reduce CTA over `num_partitions` partitions.
double reduce_cta_warp_instructions(const Workload& workload, const DecodePlan& plan, const ReduceCta& cta);

}  // namespace pao::sim

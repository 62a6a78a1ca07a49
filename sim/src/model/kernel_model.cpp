// Decode kernel models (vLLM paged_attention_v1/v2 and the V2 reduce) over the lib's plan, and the
// dispatch to the prefix and fallback models.
#include "pao/sim/model/kernel_model.hpp"

#include <algorithm>
#include <cstdio>

#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/plan/partition.hpp"
#include "pao/sim/model/fallback_model.hpp"
#include "pao/sim/model/instruction_model.hpp"
#include "pao/sim/model/prefix_workload.hpp"

namespace pao::sim {
namespace {

double act_bytes(const Workload& w) { return static_cast<double>(dtype_size(w.dtype)); }
double kv_bytes(const Workload& w) { return kv_bytes_per_element(w); }

std::int32_t num_warps(const DecodePlan& plan) { return plan.shape.threads_per_cta / plan.shape.warp_size; }

/// Bytes through L2 per DRAM byte of a launch: the logical reads (every head reads its group's
/// K/V) over what reaches DRAM (once per group).
double logical_ratio(const Workload& w, double dram_total, double kv_dram_total) {
  if (dram_total <= 0) return 1.0;
  const double group = static_cast<double>(w.num_queries_per_kv());
  return (dram_total + kv_dram_total * (group - 1.0)) / dram_total;
}

double kv_dram_bytes(const Workload& w, const DecodePlan& plan, const AttentionCta& cta) {
  const double blocks = cta.blocks(w.block_size).size();
  const double kv = 2.0 * blocks * w.block_size * w.head_size * kv_bytes(w);
  return kv / plan.num_queries_per_kv();
}

/// The work of one attention CTA without its indices, and the K/V part of its DRAM bytes.
struct DecodeCtaWork {
  CtaWork work;
  double kv_dram_bytes = 0;
};

DecodeCtaWork decode_cta_work(const Workload& w, const DecodePlan& plan,
                              const DecodeInstructionCost& instructions, const AttentionCta& cta) {
  DecodeCtaWork c;
  c.work.dram_bytes = decode_cta_dram_bytes(w, plan, cta);
  if (cta.empty()) return c;
  const std::int32_t blocks = cta.blocks(w.block_size).size();
  // Logits and P.V are computed for every slot of every loaded block (masked after).
  const double padded_tokens = static_cast<double>(blocks) * w.block_size;
  c.work.flops = padded_tokens * (4.0 * w.head_size + 5.0);
  // Each warp walks every num_warps-th block, once for Q.K (one round trip per batch of K loads
  // in flight) and once for P.V (all of a lane's V rows in flight); +2 for the cross-warp softmax
  // reductions.
  c.work.iterations = (instructions.qk_loads_in_turn + 1) * ceil_div(blocks, num_warps(plan)) + 2;
  c.work.warp_instructions = decode_cta_warp_instructions(instructions, w, cta);
  c.work.busiest_warp_instructions = decode_cta_busiest_warp_instructions(instructions, w, cta);
  c.kv_dram_bytes = kv_dram_bytes(w, plan, cta);
  return c;
}

}  // namespace

double decode_cta_dram_bytes(const Workload& w, const DecodePlan& plan, const AttentionCta& cta) {
  if (cta.empty()) return 0.0;  // an empty V2 partition returns before touching memory
  const bool v2 = plan.kernel == KernelVariant::v2;
  const double blocks = cta.blocks(w.block_size).size();
  const double query = w.head_size * act_bytes(w);
  const double block_table = blocks * 4.0;
  // V2 writes its partial output to tmp_out plus max_logits and exp_sums (fp32 each).
  const double output = w.head_size * act_bytes(w) + (v2 ? 8.0 : 0.0);
  return query + block_table + kv_dram_bytes(w, plan, cta) + output;
}

double reduce_cta_dram_bytes(const Workload& w, const DecodePlan& /*plan*/, const ReduceCta& cta) {
  const double row = w.head_size * act_bytes(w);
  // One partition: vLLM's reduce only copies tmp_out to out.
  if (cta.num_partitions == 1) return 2.0 * row;
  // max_logits and exp_sums of every partition, every partial output, one final output row.
  return cta.num_partitions * (8.0 + row) + row;
}

DecodePlan decode_plan(const Device& device, const Workload& w, const KernelConfig& kernel) {
  require(kernel.kind == KernelVariant::v1 || kernel.kind == KernelVariant::v2, "decode_plan: kernel ",
          to_string(kernel.kind), " is not a decode kernel");
  DecodeShape shape;
  static_cast<LaunchShape&>(shape) = w;
  shape.max_seq_len = w.max_seq_len;  // 0: the plan takes the longest
  static_cast<KernelTuning&>(shape) = kernel;
  shape.warp_size = static_cast<std::int32_t>(device.warp_size);  // the device's warp, not the tuning's
  return plan_decode(kernel.kind, shape, w.seq_lens);
}

std::vector<Launch> decode_launches(const Device& device, const Workload& w, const KernelConfig& kernel,
                                    const DecodePlan& plan) {
  const bool v2 = plan.kernel == KernelVariant::v2;
  const std::int32_t warps = num_warps(plan);
  std::vector<Launch> launches;

  Launch attn;
  attn.name = v2 ? "paged_attention_v2" : "paged_attention_v1";
  attn.resources.threads = plan.shape.threads_per_cta;
  attn.resources.registers_per_thread =
      kernel.registers_per_thread > 0 ? kernel.registers_per_thread
                                      : decode_registers_per_thread(kernel.implementation, plan.kernel, w);
  // Dynamic shared memory from the plan (vLLM's rule), plus the static q_vecs and red_smem arrays.
  attn.resources.shared_bytes = static_cast<std::int64_t>(plan.attention_shared_bytes) +
                                static_cast<std::int64_t>(w.head_size * act_bytes(w)) + 2 * warps * 4;
  attn.cycles_per_warp_instruction = implementation_cycles_per_warp_instruction(kernel.implementation);
  attn.ctas.reserve(plan.ctas.size());
  const InstructionScale expansion = instruction_expansion(device);
  const DecodeInstructionCost instructions =
      decode_instruction_cost(w, plan, kernel.implementation, expansion);
  double kv_dram_total = 0;
  // A CTA's work depends on its counts of blocks and tokens only, so a CTA with the counts of the
  // one before it (every full partition: millions at long contexts) reuses its numbers.
  const AttentionCta* counted = nullptr;  // the CTA `cost` was computed for
  DecodeCtaWork cost;
  for (const auto& cta : plan.ctas) {
    if (counted == nullptr || cta.num_tokens() != counted->num_tokens() ||
        cta.blocks(w.block_size).size() != counted->blocks(w.block_size).size()) {
      cost = decode_cta_work(w, plan, instructions, cta);
      counted = &cta;
    }
    CtaWork work = cost.work;
    work.seq = cta.seq;
    work.head = cta.head;
    work.partition = v2 ? cta.partition : -1;
    kv_dram_total += cost.kv_dram_bytes;
    attn.ctas.push_back(work);
  }
  attn.logical_per_dram_byte = logical_ratio(w, attn.total_dram_bytes(), kv_dram_total);
  launches.push_back(std::move(attn));

  if (v2) {
    Launch reduce;
    reduce.name = "paged_attention_v2_reduce";
    reduce.resources.threads = plan.shape.threads_per_cta;
    reduce.resources.registers_per_thread = kReduceRegisters;
    reduce.resources.shared_bytes = static_cast<std::int64_t>(plan.reduce_shared_bytes) + 2 * warps * 4;
    reduce.cycles_per_warp_instruction = attn.cycles_per_warp_instruction;
    reduce.ctas.reserve(plan.reduce_ctas.size());
    const double reduce_in_order = instruction_scale(kernel.implementation, w).in_order;
    for (const auto& r : plan.reduce_ctas) {
      CtaWork work;
      work.seq = r.seq;
      work.head = r.head;
      work.dram_bytes = reduce_cta_dram_bytes(w, plan, r);
      work.flops = static_cast<double>(r.num_partitions) * (2.0 * w.head_size + 5.0);
      // Load the logits, reduce across warps, then the partial outputs (16 loads in flight).
      work.iterations = 3 + ceil_div(std::max(r.num_partitions, 0), 16);
      work.warp_instructions = reduce_cta_warp_instructions(w, plan, r, kernel.implementation, expansion);
      // Its loops span the CTA's threads evenly.
      work.busiest_warp_instructions = work.warp_instructions / warps * reduce_in_order;
      reduce.ctas.push_back(work);
    }
    launches.push_back(std::move(reduce));
  }
  return launches;
}

double estimated_ctas(const Workload& w, const KernelConfig& kernel) {
  const double seqs = w.num_seqs, heads = w.num_heads,
               kv_width = static_cast<double>(w.num_kv_heads) * w.head_size;
  const std::int32_t max_len = std::max(1, w.effective_max_seq_len());
  std::int32_t max_query = 1;
  for (std::size_t s = 0; s < w.seq_lens.size(); ++s) max_query = std::max(max_query, w.query_len(s));
  // The grids of the plans (pao/plan), counted without building them; validate_workload has
  // checked the sizes, the tunings are checked by the plans (a 0 here counts as 1).
  switch (kernel.kind) {
    case KernelVariant::v1:
      return seqs * heads;
    case KernelVariant::v2:  // max_num_partitions for every sequence, plus the reduce's CTA
      return seqs * heads * (max_num_partitions(max_len, std::max(1, kernel.partition_size)) + 1.0);
    case KernelVariant::prefix:  // (num_seqs, num_heads, ceil(max_query_len / block_m))
      return seqs * heads * ceil_div(max_query, std::max(1, kernel.block_m));
    case KernelVariant::fallback:  // a dozen ops per K tile; gathers and scores of 1024 elements per CTA
      return 12.0 * ceil_div(max_len, std::max(1, kernel.fallback_tile)) +
             seqs * max_len * (2 * kv_width + 6 * heads * max_query) / 1024;
  }
  return 0;
}

double estimated_simulation_bytes(const Workload& w, const KernelConfig& kernel) {
  // A CTA's work record and its plan entry, about 72 bytes together (CtaWork 48, AttentionCta 20).
  double bytes = 72.0 * estimated_ctas(w, kernel);
  if (kernel.kind == KernelVariant::prefix) {  // the prefix plan's CTA and K-tile lists besides
    PrefixShape shape;
    static_cast<LaunchShape&>(shape) = w;
    static_cast<KernelTuning&>(shape) = kernel;
    bytes += prefix_plan_bytes(shape, w.seq_lens, w.query_lens);
  }
  return bytes;
}

std::vector<Launch> build_launches(const Device& device, const Workload& w, const KernelConfig& kernel) {
  validate_workload(w);
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", estimated_ctas(w, kernel));
  require_memory(
      "simulating " + kernel.label() + " on " + w.to_string() + " (" + count + " CTAs)",
      estimated_simulation_bytes(w, kernel),
      "shorten --seq-len, or fewer sequences or heads (prefix: larger tiles, a smaller max_query_len)");
  switch (kernel.kind) {
    case KernelVariant::v1:
    case KernelVariant::v2:
      return decode_launches(device, w, kernel, decode_plan(device, w, kernel));
    case KernelVariant::prefix:
      require(kernel.implementation == KernelImplementation::vllm, "simulating ", kernel.label(),
              ": no model of pao's own CUDA prefix kernel (a reference kernel, one K tile at a time: "
              "under GPGPU-Sim it takes about 300 times the modelled prefix time, docs/gpgpusim.md); "
              "the prefix model is vLLM's kernel (implementation vllm)");
      return prefix_launches(device, w, kernel);
    case KernelVariant::fallback:
      require(kernel.implementation == KernelImplementation::vllm, "simulating ", kernel.label(),
              ": the fallback is a host loop of framework ops, not a pao CUDA kernel (implementation vllm)");
      return fallback_launches(device, w, kernel);
  }
  fail("build_launches: unknown kernel kind");
}

}  // namespace pao::sim

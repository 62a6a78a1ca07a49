// Instruction counts of vLLM's decode kernels and the V2 reduce, phase by phase (see the header and
// docs/simulator.md, "Instruction issue"). Costs are per lane; a warp executes a lane's
// instructions once for all its lanes, so per-lane counts add up to warp instructions.
#include "pao/sim/model/instruction_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "pao/core/error.hpp"
#include "pao/plan/partition.hpp"

namespace pao::sim {
namespace {

double log2_of(std::int32_t n) { return n > 1 ? std::log2(static_cast<double>(n)) : 0.0; }

/// Conversions to fp32 per element of one operand: 0 for f32, 1 for f16 / bf16 (the unpack of a
/// packed pair into two floats).
double widen_cost(DType activation) { return activation == DType::f32 ? 0.0 : 1.0; }

/// Extra instructions per cache element of a quantised cache: fp8, the fp8 -> 16-bit conversion
/// and the multiplication by k_scale / v_scale; an integer cache, the int -> float conversion, the
/// zero point's subtraction and the scale's multiplication (its parameters' loads are amortised
/// over a token's or a group's elements and left out).
double dequant_cost(DType cache) { return is_fp8(cache) ? 2.0 : is_integer_cache(cache) ? 3.0 : 0.0; }

// Fixed costs, in instructions per lane.
constexpr double kBlockAddress = 4;     // block-table load, physical block number -> cache address
constexpr double kTokenAddress = 4;     // a token's K base address inside the block
constexpr double kLogitEpilogue = 7;    // scale, mask compare and select, shared store, running max, index
constexpr double kSoftmaxExpPass = 6;   // load, subtract max, scale by log2(e), ex2, store, sum
constexpr double kSoftmaxNormPass = 3;  // load, multiply by 1 / sum, store
constexpr double kPrologue = 30;        // indices, sequence length, partition bounds, q to shared
constexpr double kBroadcast = 6;        // lane 0 to shared, barrier, read back, barrier

/// A block-wide reduction: a warp butterfly (shuffle + op), the warps' partials through shared
/// memory, a butterfly over the warps, the broadcast.
double block_reduction(std::int32_t warp_size, std::int32_t warps) {
  return 2 * log2_of(warp_size) + 2 * log2_of(warps) + kBroadcast;
}

}  // namespace

InstructionScale instruction_scale(KernelImplementation implementation, const Workload& w) {
  if (implementation == KernelImplementation::vllm) return {};
  // pao's CUDA kernels (sm_75 PTX, head 128) over this model's counts of vLLM's for the same
  // launches, per compiled instance: GPGPU-Sim's warp instructions issued in the
  // gpgpusim-microbench launches, as tools/gpgpusim/instruction_scale.py derives them (its output:
  // docs/gpgpusim.md) — data/measurements/gpgpusim-v100-microbench-cuts.csv for pao-cuda,
  // gpgpusim-v100-microbench.csv for pao-cuda-pre38 (whose in_order factors were taken with the
  // round trips in until 2026-12-06: 0.889, 0.703, 0.653, 0.528, 0.504). Other head sizes follow
  // vLLM's structure, checked on the gpgpusim-shapes launches.
  struct Measured {
    KernelImplementation implementation;
    DType dtype, cache;
    std::int32_t block_size;
    InstructionScale scale;
  };
  using enum KernelImplementation;
  static constexpr Measured kMeasured[] = {
      {pao_cuda, DType::f16, DType::f16, 16, {1.478, 3.762, 5.667, 2.676, 1.000}},
      {pao_cuda, DType::f16, DType::f16, 32, {1.516, 2.768, 5.667, 2.676, 1.199}},
      {pao_cuda, DType::bf16, DType::bf16, 16, {5.094, 4.445, 5.750, 2.897, 0.655}},
      {pao_cuda, DType::bf16, DType::bf16, 32, {5.346, 3.117, 5.750, 2.897, 0.717}},
      {pao_cuda, DType::f16, DType::fp8_e4m3, 16, {5.063, 4.063, 5.667, 2.676, 0.600}},
      {pao_cuda, DType::f16, DType::fp8_e4m3, 32, {5.514, 2.887, 5.667, 2.676, 0.637}},
      {pao_cuda_pre38, DType::f16, DType::f16, 16, {3.682, 3.419, 5.667, 2.676, 1.000}},
      {pao_cuda_pre38, DType::f16, DType::f16, 32, {3.425, 2.605, 5.667, 2.676, 0.911}},
      {pao_cuda_pre38, DType::bf16, DType::bf16, 16, {6.895, 3.706, 5.750, 2.897, 0.715}},
      {pao_cuda_pre38, DType::bf16, DType::bf16, 32, {6.386, 2.805, 5.750, 2.897, 0.678}},
      {pao_cuda_pre38, DType::f16, DType::fp8_e4m3, 16, {6.385, 3.541, 5.667, 2.676, 0.540}},
      {pao_cuda_pre38, DType::f16, DType::fp8_e4m3, 32, {6.439, 2.520, 5.667, 2.676, 0.527}},
  };
  // The instance of the workload's dtypes with the nearest block size; the implementation's f16
  // over f16 at blocks of 16 for dtypes no microbenchmark measured.
  const Measured* best = nullptr;
  const Measured* reference = nullptr;
  for (const auto& m : kMeasured) {
    if (m.implementation != implementation) continue;
    if (m.dtype == DType::f16 && m.cache == DType::f16 && m.block_size == 16) reference = &m;
    if (m.dtype == w.dtype && m.cache == w.kv_cache_dtype &&
        (best == nullptr ||
         std::abs(m.block_size - w.block_size) < std::abs(best->block_size - w.block_size)))
      best = &m;
  }
  return (best != nullptr ? *best : *reference).scale;
}

InstructionScale instruction_expansion(const Device& device) {
  return {device.instruction_expansion_tokens, device.instruction_expansion_cta,
          device.instruction_expansion_reduce_copy, device.instruction_expansion_reduce_merge, 1.0};
}

namespace {

/// What the device issues: vLLM's kernels, the model's count times the device's expansion; pao's,
/// their own measured counts.
InstructionScale issued_scale(KernelImplementation implementation, const Workload& w,
                              const InstructionScale& expansion) {
  return implementation == KernelImplementation::vllm ? expansion : instruction_scale(implementation, w);
}

}  // namespace

double implementation_cycles_per_warp_instruction(KernelImplementation implementation) {
  return implementation == KernelImplementation::pao_cuda_pre38 ? kPaoCudaPre38CyclesPerWarpInstruction : 0.0;
}

std::int32_t qk_loads_in_turn(KernelImplementation implementation, const Workload& w,
                              const DecodeGeometry& g) {
  const std::int32_t k_vectors = w.head_size / g.dims_per_step;  // a lane's K vectors per token
  switch (implementation) {
    case KernelImplementation::vllm:
      return 1;
    case KernelImplementation::pao_cuda:
      return qk_load_rounds(g, w.head_size, qk_cache(w.kv_cache_dtype));
    case KernelImplementation::pao_cuda_pre38:
      return ceil_div(k_vectors, kPaoCudaPre38KLoadsInFlight);
  }
  return 1;
}

DecodeInstructionCost decode_instruction_cost(const Workload& w, const DecodePlan& plan,
                                              KernelImplementation implementation,
                                              const InstructionScale& expansion) {
  const std::int32_t elem = dtype_size(w.dtype);
  const DecodeGeometry g =
      DecodeGeometry::make(plan.shape.warp_size, plan.shape.threads_per_cta, w.block_size, elem);
  require(g.v_row_fits_warp(), "block_size = ", w.block_size, ": vLLM's decode kernel would need ",
          g.v_vecs_per_row, " lanes per V row, more than a warp of ", plan.shape.warp_size,
          " (NUM_V_VECS_PER_ROW <= WARP_SIZE)");
  const double widen = widen_cost(w.dtype);
  const double dequant = dequant_cost(w.kv_cache_dtype);
  DecodeInstructionCost c;

  // Q·K: a thread group of g.thread_group_size lanes per token, ceil(block / warp) tokens per
  // group; each lane loads head_size / group elements of K in vectors of vec_size and multiplies
  // them with its q elements (both widened to fp32, one FMA each), sums its vec_size accumulators,
  // and the group reduces by shuffles.
  const double lane_elems = static_cast<double>(w.head_size) / g.thread_group_size;
  const double k_loads = lane_elems / g.vec_size;
  const double per_token = kTokenAddress + k_loads + lane_elems * (1 + 2 * widen + dequant) +
                           (g.vec_size - 1) + 2 * log2_of(g.thread_group_size) + kLogitEpilogue;
  const std::int32_t tokens_per_group = ceil_div(w.block_size, plan.shape.warp_size);
  c.qk_per_block = kBlockAddress + tokens_per_group * per_token;

  // P·V: a lane takes v_vec_size tokens' probabilities (fp32 from shared memory, 4 per load,
  // narrowed to the activation dtype) and, for each of its head rows, loads v_vec_size values of V
  // and accumulates their dot product: a packed multiply per pair and a widening add per element
  // in 16 bits, a multiply and an add per element in fp32.
  const double vv = g.v_vec_size;
  const double rows_per_lane = ceil_div(w.head_size, g.rows_per_iter);
  const double dot = w.dtype == DType::f32 ? 2.0 : 0.5 + widen + 1.0;
  c.pv_per_block = kBlockAddress + std::ceil(vv / 4) + (w.dtype == DType::f32 ? 0.0 : vv / 2) +
                   rows_per_lane * (2 + vv * (dot + dequant));

  // Softmax over the CTA's logits in shared memory: each round, every lane of every warp takes
  // one token (exp pass, then normalisation pass).
  c.threads = g.num_threads;
  c.warps = g.num_warps;
  c.softmax_per_round = g.num_warps * (kSoftmaxExpPass + kSoftmaxNormPass);

  // Per CTA: the prologue, the max and sum reductions, the row butterflies of P·V, the cross-warp
  // reduction of the accumulators (log2(warps) rounds through shared memory), the output store;
  // V2 also stores its max_logit and exp_sum.
  const double warps = g.num_warps;
  const double per_lane = kPrologue + 2 * block_reduction(g.warp_size, g.num_warps) +
                          rows_per_lane * 2 * log2_of(g.v_vecs_per_row) +
                          log2_of(g.num_warps) * (2 * rows_per_lane + 2) + 2 * rows_per_lane;
  c.per_cta = warps * per_lane + (plan.kernel == KernelVariant::v2 ? 4.0 : 0.0);

  const InstructionScale scale = issued_scale(implementation, w, expansion);
  c.qk_per_block *= scale.per_tokens;
  c.pv_per_block *= scale.per_tokens;
  c.softmax_per_round *= scale.per_tokens;
  c.per_cta *= scale.per_cta;
  c.in_order = scale.in_order;
  c.qk_loads_in_turn = qk_loads_in_turn(implementation, w, g);
  return c;
}

double decode_cta_warp_instructions(const DecodeInstructionCost& c, const Workload& w,
                                    const AttentionCta& cta) {
  if (cta.empty()) return 0.0;
  const double blocks = cta.blocks(w.block_size).size();
  const double rounds = ceil_div(cta.num_tokens(), c.threads);
  return blocks * (c.qk_per_block + c.pv_per_block) + rounds * c.softmax_per_round + c.per_cta;
}

double decode_cta_busiest_warp_instructions(const DecodeInstructionCost& c, const Workload& w,
                                            const AttentionCta& cta) {
  if (cta.empty() || c.warps <= 0) return 0.0;
  const std::int32_t blocks = cta.blocks(w.block_size).size();
  const double rounds = ceil_div(cta.num_tokens(), c.threads);
  return c.in_order * (ceil_div(blocks, c.warps) * (c.qk_per_block + c.pv_per_block) +
                       (rounds * c.softmax_per_round + c.per_cta) / c.warps);
}

namespace {

/// vLLM's reduce CTA (reduce_cta_warp_instructions without the implementation's scale).
double vllm_reduce_cta_warp_instructions(const Workload& w, const DecodePlan& plan, const ReduceCta& r) {
  const std::int32_t threads = plan.shape.threads_per_cta, warp = plan.shape.warp_size;
  const double warps = static_cast<double>(threads) / warp;
  const double row_rounds = ceil_div(w.head_size, threads);                   // output elements per lane
  const double row_warps = ceil_div(std::min(w.head_size, threads), warp);    // warps that hold one
  if (r.num_partitions <= 1) return warps * 10 + row_warps * row_rounds * 2;  // copy tmp_out to out
  const double p = r.num_partitions;
  const double rounds = std::ceil(p / threads);
  // max_logits to shared and their max (3 per partition), then exp_sums rescaled by exp(m_p - m)
  // and summed (8 per partition), two block reductions; the output: per element, per partition, a
  // load of tmp_out, its widening, a load of the partition's weight and an FMA.
  const double per_lane = kPrologue + rounds * (3 + 8) + 2 * block_reduction(warp, threads / warp);
  const double output = row_warps * row_rounds * (p * (3 + widen_cost(w.dtype)) + 2);
  return warps * per_lane + output;
}

}  // namespace

double reduce_cta_warp_instructions(const Workload& w, const DecodePlan& plan, const ReduceCta& r,
                                    KernelImplementation implementation, const InstructionScale& expansion) {
  const InstructionScale scale = issued_scale(implementation, w, expansion);
  return vllm_reduce_cta_warp_instructions(w, plan, r) *
         (r.num_partitions <= 1 ? scale.reduce_copy : scale.reduce_merge);
}

}  // namespace pao::sim

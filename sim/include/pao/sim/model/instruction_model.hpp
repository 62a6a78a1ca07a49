// Instruction counts of vLLM's decode kernels (csrc/attention/attention_kernels.cuh), derived from
// the kernel's structure: the thread geometry (pao/kernels/decode_geometry.hpp: thread groups of
// max(warp_size / block_size, 1) lanes, K vectors of 16 bytes per group, V vectors of
// min(16 / sizeof(scalar_t), block_size) tokens), the head size, the block size and the warps of a
// CTA. Every lane of a warp runs the same instruction, so a count per lane is a count of warp
// instructions; a CTA's total is charged against the SM's issue rate (schedulers x clock x
// issue_efficiency) by the engine. The per-operation costs are the instruction classes of the
// kernel's inner loops (a load, an FMA, a conversion of a 16-bit or fp8 element to fp32, a shuffle),
// one instruction each; what compilers fuse or split is left to the fitted issue_efficiency.
//
// pao's own CUDA kernels (KernelImplementation::pao_cuda: cuda/kernels, as tools/gpgpusim runs
// their PTX) compute the same CTAs with their own instructions per phase: q kept in fp32 in shared
// memory, --fmad=false, kernel_exp's polynomial instead of ex2, bf16 roundings in software on sm_75.
// Their counts are vLLM's structure scaled phase by phase by the factors instruction_scale() holds
// per compiled instance, which GPGPU-Sim's counts of microbenchmark launches measured
// (docs/gpgpusim.md, "Instruction counts and in-order issue"). pao_cuda_pre38 is the kernels
// before issue #38's cuts (every K / V address through PagedCacheLayout::offset: 64-bit products,
// a division for the x-split K layout), which the H200 rows of pao's kernels timed: their own
// factors, load order and in-order rate.
#pragma once

#include "pao/kernels/decode_geometry.hpp"
#include "pao/plan/decode_plan.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// Warp instructions of one decode CTA's phases, per unit of its work.
struct DecodeInstructionCost {
  double qk_per_block = 0;       // one warp's Q·K over one cache block (its tokens' logits)
  double pv_per_block = 0;       // one warp's P·V over one cache block (all head rows)
  double softmax_per_round = 0;  // all warps' exp, sum and normalisation of `threads` logits
  double per_cta = 0;            // q load, the CTA's reductions, the output (and V2's statistics)
  std::int32_t threads = 0;      // logits per softmax round: one per lane of the CTA
  std::int32_t warps = 0;        // of the CTA
  double in_order = 1;           // InstructionScale::in_order: weights the busiest warp's count
  /// Dependent load round trips of one warp's Q·K over a block (qk_loads_in_turn()).
  std::int32_t qk_loads_in_turn = 1;
};

/// K vectors a lane of pao's CUDA decode kernels before issue #38 loaded before it waited on the
/// first: their Q·K loop's `#pragma unroll 4`, as the pao-cuda-pre38 rows timed it.
inline constexpr std::int32_t kPaoCudaPre38KLoadsInFlight = 4;

/// Dependent load round trips of one warp's Q·K over a block: vLLM issues all of a token's K
/// vectors before their first use (1); pao's kernels wait once per batch of K vectors
/// (pao::qk_load_rounds, pao/kernels/decode_geometry.hpp: one batch up to 16 vectors of up to 4
/// elements, beyond that batches of up to 128 bytes: two of 16 at head size 256 over f16 or bf16 at
/// blocks of 16, four of 8 over an fp8 cache) or once per pao::kQkUnroll vectors
/// of a lane's head_size / dims_per_step; pao-cuda-pre38 waited once per kPaoCudaPre38KLoadsInFlight.
std::int32_t qk_loads_in_turn(KernelImplementation implementation, const Workload& workload,
                              const DecodeGeometry& geometry);

/// Instructions of an implementation's kernels per instruction of vLLM's, phase by phase.
struct InstructionScale {
  double per_tokens = 1;    // what grows with the tokens: Q·K and P·V per block, the softmax rounds
  double per_cta = 1;       // the attention CTA's fixed part
  double reduce_copy = 1;   // a V2 reduce CTA of one partition (a copy of tmp_out)
  double reduce_merge = 1;  // a V2 reduce CTA of two or more partitions
  /// The instance's cycles per instruction in program order over the reference instance's (f16,
  /// blocks of 16: the device's cycles_per_warp_instruction): bf16's software roundings on sm_75
  /// are independent integer instructions that issue faster than a load-bound stream. Weights the
  /// busiest warp's instructions of the in-order floor.
  double in_order = 1;
};
/// 1 for vLLM; for pao's kernels, the factors measured for the workload's compiled instance (its
/// activation dtype, cache dtype and block size), or for the nearest one measured: pao's PTX
/// instructions as GPGPU-Sim issues them over the model's count of vLLM's kernel. On hardware they
/// stand for pao's machine code: the H200 rows of pao-cuda-pre38 fit best so, not as factors over
/// vLLM's own PTX (docs/gpgpusim.md, "Whose instructions, on hardware").
InstructionScale instruction_scale(KernelImplementation implementation, const Workload& workload);

/// The device's instruction_expansion_* fields: what it issues per instruction of the model's
/// count of vLLM's kernels, phase by phase (in_order 1).
InstructionScale instruction_expansion(const Device& device);

/// Cycles between a lone warp's consecutive instructions of pao's CUDA kernels before issue #38
/// (the reference instance, f16 over blocks of 16), on any device: each K / V address through
/// PagedCacheLayout::offset, a load beside each use and sequential __fadd_rn sums made chains of
/// dependent instructions that no scheduler hides, so they took the pipeline's dependent-issue
/// latencies whoever ran them. Measured under GPGPU-Sim's V100 model, which runs PTX in program
/// order (simulated cycles less the launch latency and the dependent load round trips, over the
/// busiest warp's instructions, 28 kernels of the f16 microbenchmarks of
/// data/measurements/gpgpusim-v100-microbench.csv; tests/sim/test_sim_gpgpusim.cpp recomputes it).
/// On the H200 this predicted those kernels from a descriptor calibrated on vLLM's
/// (docs/simulator.md). pao's kernels since, like vLLM's, issue a token's loads before its
/// products and take the device's cycles_per_warp_instruction.
inline constexpr double kPaoCudaPre38CyclesPerWarpInstruction = 11.88;

/// The in-order rate a launch of the implementation's kernels carries
/// (Launch::cycles_per_warp_instruction): kPaoCudaPre38CyclesPerWarpInstruction for
/// pao_cuda_pre38, 0 (the device's) for vLLM's and pao's current kernels.
double implementation_cycles_per_warp_instruction(KernelImplementation implementation);

/// The costs for a workload's shapes and dtypes on a plan's geometry (warp size, threads per CTA),
/// for vLLM's kernels or (scaled) pao's, in the instructions a device issues: vLLM's, the model's
/// count times `expansion` (instruction_expansion(device); the default is the count itself);
/// pao's, the count times instruction_scale().
DecodeInstructionCost decode_instruction_cost(
    const Workload& workload, const DecodePlan& plan,
    KernelImplementation implementation = KernelImplementation::vllm, const InstructionScale& expansion = {});

/// Warp instructions of one attention CTA: every loaded block once (the warps split the blocks),
/// the softmax over the CTA's tokens, the fixed part. 0 for an empty V2 partition.
double decode_cta_warp_instructions(const DecodeInstructionCost& cost, const Workload& workload,
                                    const AttentionCta& cta);

/// Instructions of the attention CTA's busiest warp: its share of the fixed part and of the
/// softmax rounds, and ceil(blocks / warps) blocks (warp w takes blocks w, w + warps, ...); times
/// the cost's in_order weight.
double decode_cta_busiest_warp_instructions(const DecodeInstructionCost& cost, const Workload& workload,
                                            const AttentionCta& cta);

/// Warp instructions of one V2 reduce CTA over `num_partitions` partitions (times `expansion`, as
/// decode_instruction_cost's).
double reduce_cta_warp_instructions(const Workload& workload, const DecodePlan& plan, const ReduceCta& cta,
                                    KernelImplementation implementation = KernelImplementation::vllm,
                                    const InstructionScale& expansion = {});

}  // namespace pao::sim

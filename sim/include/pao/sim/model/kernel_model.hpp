// Kernel models: turn a workload and a kernel choice into the launches the engine times — per-CTA
// resources, DRAM bytes, FLOPs and dependent iterations. CTAs come from the lib's plans
// (pao::plan_decode, pao::plan_prefix); nothing here re-derives partitioning.
#pragma once

#include <vector>

#include "pao/plan/decode_plan.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/kernel_registers.hpp"
#include "pao/sim/model/launch.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// Registers per thread of the kernels without a measured count (assumed; the decode kernels'
/// are measured: kernel_registers.hpp; `KernelConfig::registers_per_thread` overrides any).
inline constexpr std::int32_t kPrefixRegisters = 128;
inline constexpr std::int32_t kFallbackRegisters = 32;

/// The CTAs the launches of one kernel choice hold, all launches together, from the workload's
/// sizes alone (before any is built): a V2 grid at 2·10^9 tokens is billions of CTAs.
double estimated_ctas(const Workload& workload, const KernelConfig& kernel);

/// The bytes building the launches of one kernel choice takes, from the sizes alone: a CTA's work
/// record and its plan entry (about 72 bytes together), and the prefix plan's K tiles.
double estimated_simulation_bytes(const Workload& workload, const KernelConfig& kernel);

/// All launches of one kernel choice, in stream order. Throws pao::Error (pao/core/memory.hpp)
/// before building launches whose CTAs would not fit in the machine's memory.
std::vector<Launch> build_launches(const Device& device, const Workload& workload,
                                   const KernelConfig& kernel);

/// The lib's decode plan for this workload (V1 or V2).
DecodePlan decode_plan(const Device& device, const Workload& workload, const KernelConfig& kernel);

/// Decode launches from a plan: V1 is one launch; V2 is the partition kernel and the reduce. Their
/// instructions are the ones the device issues (its instruction_expansion_*).
std::vector<Launch> decode_launches(const Device& device, const Workload& workload,
                                    const KernelConfig& kernel, const DecodePlan& plan);

/// DRAM bytes of one decode attention CTA (0 for an empty V2 partition).
/// K/V: whole blocks of [block_begin, block_end) as vLLM loads them, divided by the GQA group size
/// (the heads of a group are adjacent in grid order and share K/V through L2).
double decode_cta_dram_bytes(const Workload& workload, const DecodePlan& plan, const AttentionCta& cta);
/// DRAM bytes of one reduce CTA.
double reduce_cta_dram_bytes(const Workload& workload, const DecodePlan& plan, const ReduceCta& cta);

}  // namespace pao::sim

// What the engine times: kernel launches, each a grid of CTAs with their work. Built from the lib's
// plan by kernel_model.hpp; independent of any device number except where a kernel's shape depends
// on the warp size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/sim/model/occupancy.hpp"

namespace pao::sim {

/// The work of one CTA.
struct CtaWork {
  double dram_bytes = 0;        // bytes this CTA moves between DRAM and the SM (after L2 reuse)
  double flops = 0;             // floating-point operations
  std::int32_t iterations = 0;  // dependent iterations: time >= iterations * iteration_latency
  std::int32_t seq = -1;        // for traces; -1 where it does not apply
  std::int32_t head = -1;
  std::int32_t partition = -1;  // V2 partition, prefix query tile, fallback K tile
  /// Warp instructions the CTA issues (instruction_model.hpp); charged against the SM's issue
  /// rate like FLOPs against its arithmetic units. 0 where a kernel has no instruction model.
  double warp_instructions = 0;
  /// Instructions of the CTA's busiest warp, one after another: with cycles_per_warp_instruction,
  /// the CTA's in-order floor (engine.hpp, cta_latency_us). 0 where a kernel has no instruction model.
  double busiest_warp_instructions = 0;
};

/// Which arithmetic units a kernel's FLOPs run on.
enum class ComputeUnit : std::uint8_t { fp32_cores, matrix_fp16 };

/// One kernel launch: CTAs in grid order (the order the block scheduler hands them out).
struct Launch {
  std::string name;
  CtaResources resources;
  std::vector<CtaWork> ctas;
  /// Bytes through L2 per DRAM byte (>= 1): GQA heads re-read their group's K/V from L2, so the
  /// L2 bandwidth and the per-SM cap see more bytes than DRAM does.
  double logical_per_dram_byte = 1.0;
  ComputeUnit compute = ComputeUnit::fp32_cores;
  /// Cycles between the busiest warp's instructions in program order when the kernel's code sets
  /// them (pao's own CUDA kernels: dependence chains that ptxas cannot schedule away); 0: the
  /// device's cycles_per_warp_instruction (a scheduled kernel such as vLLM's).
  double cycles_per_warp_instruction = 0;
  /// Host time between issuing the previous launch and this one (0 for back-to-back launches
  /// from one C++ op; the framework's per-op cost for the host-loop fallback).
  double host_issue_delay_us = 0;

  double total_dram_bytes() const;
  double total_flops() const;
  double total_warp_instructions() const;
};

}  // namespace pao::sim

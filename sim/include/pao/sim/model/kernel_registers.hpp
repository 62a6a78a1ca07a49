// Registers per thread of the compiled decode kernels: what sets their occupancy on an NVIDIA SM.
// ptxas's own counts (nvcc 13.0 -O3 -arch=sm_90 -Xptxas -v, 128 threads per CTA) of vLLM's
// paged_attention_v1/v2 kernels (csrc/attention/attention_kernels.cuh, release source, compiled
// outside the project) and of pao's cuda/kernels, with the commands that produced them:
// data/measurements/sm90-decode-registers.md. Other targets (sm_80, the BI-V100's compiler) are
// assumed to allocate alike.
#pragma once

#include <cstdint>

#include "pao/core/dtype.hpp"
#include "pao/plan/kernel_variant.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// Registers per thread of a decode attention kernel (V1 or V2) of `implementation` for the
/// workload's dtypes, head size and block size: the measured instance, or of the instances with
/// the workload's dtypes (else f16 over f16) the one nearest in head size, then block size.
std::int32_t decode_registers_per_thread(KernelImplementation implementation, KernelVariant kernel,
                                         const Workload& workload);

/// Registers per thread of the V2 reduce kernel: 32 for both implementations, every instance.
inline constexpr std::int32_t kReduceRegisters = 32;

}  // namespace pao::sim

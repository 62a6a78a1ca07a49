// The NVIDIA CTA the decode kernels are written for, shared by host and device (no CUDA headers).
// What each CTA computes its work from is the plan's partition arithmetic (pao/plan/partition.hpp:
// partition_tokens, partitions_of_sequence) and the thread geometry of DecodeGeometry::make, the
// definitions the oracle uses.
#pragma once

#include <cstdint>

namespace pao::cuda {

/// Warp size and threads per CTA of the CUDA kernels (and the oracle's KernelTuning defaults).
inline constexpr std::int32_t kWarpSize = 32;
inline constexpr std::int32_t kThreadsPerCta = 128;

}  // namespace pao::cuda

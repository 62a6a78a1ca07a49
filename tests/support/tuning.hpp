// KernelTunings the kernel tests sweep: the kernel precision's GPU (warp size, threads per CTA)
// or V2's partition size set, vLLM's defaults (pao/plan/kernel_tuning.hpp) for the rest.
#pragma once

#include <cstdint>

#include "pao/plan/kernel_tuning.hpp"

namespace pao::test {

inline KernelTuning gpu_tuning(std::int32_t warp_size, std::int32_t threads_per_cta, KernelTuning t = {}) {
  t.warp_size = warp_size;
  t.threads_per_cta = threads_per_cta;
  return t;
}

inline KernelTuning partitioned(std::int32_t partition_size, KernelTuning t = {}) {
  t.partition_size = partition_size;
  return t;
}

}  // namespace pao::test

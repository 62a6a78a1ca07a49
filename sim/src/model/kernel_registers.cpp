// The measured register counts of the decode kernels (kernel_registers.hpp).
#include "pao/sim/model/kernel_registers.hpp"

#include <cstdlib>

namespace pao::sim {
namespace {

struct Instance {
  KernelImplementation implementation;
  KernelVariant kernel;  // pao's one attention kernel serves V1 and V2: listed under both
  DType dtype, cache;
  std::int32_t head_size, block_size, registers;
};

using enum KernelImplementation;
using enum KernelVariant;
constexpr DType f16 = DType::f16, bf16 = DType::bf16, e4m3 = DType::fp8_e4m3;

// data/measurements/sm90-decode-registers.md (V2 at partitions 256, 512 and 1024 alike).
constexpr Instance kMeasured[] = {
    {vllm, v1, f16, f16, 64, 16, 55},
    {vllm, v1, f16, f16, 128, 8, 94},
    {vllm, v1, f16, f16, 128, 16, 96},
    {vllm, v1, f16, f16, 128, 32, 66},
    {vllm, v1, f16, f16, 256, 16, 164},
    {vllm, v1, bf16, bf16, 128, 16, 96},
    {vllm, v1, f16, e4m3, 128, 16, 121},
    {vllm, v2, f16, f16, 64, 16, 62},
    {vllm, v2, f16, f16, 128, 8, 96},
    {vllm, v2, f16, f16, 128, 16, 96},
    {vllm, v2, f16, f16, 128, 32, 68},
    {vllm, v2, f16, f16, 256, 16, 126},
    {vllm, v2, bf16, bf16, 128, 16, 96},
    {vllm, v2, f16, e4m3, 128, 16, 91},
    // pao's kernels before issue #38's cuts (HEAD 7494dac, the kernels of the H200 rows)
    {pao_cuda_pre38, v1, f16, f16, 64, 16, 94},
    {pao_cuda_pre38, v1, f16, f16, 128, 8, 80},
    {pao_cuda_pre38, v1, f16, f16, 128, 16, 80},
    {pao_cuda_pre38, v1, f16, f16, 128, 32, 114},
    {pao_cuda_pre38, v1, f16, f16, 256, 16, 120},
    {pao_cuda_pre38, v1, bf16, bf16, 64, 16, 96},
    {pao_cuda_pre38, v1, bf16, bf16, 128, 8, 80},
    {pao_cuda_pre38, v1, bf16, bf16, 128, 16, 96},
    {pao_cuda_pre38, v1, bf16, bf16, 128, 32, 120},
    {pao_cuda_pre38, v1, bf16, bf16, 256, 16, 124},
    {pao_cuda_pre38, v1, f16, e4m3, 64, 16, 80},
    {pao_cuda_pre38, v1, f16, e4m3, 128, 8, 80},
    {pao_cuda_pre38, v1, f16, e4m3, 128, 16, 72},
    {pao_cuda_pre38, v1, f16, e4m3, 128, 32, 96},
    {pao_cuda_pre38, v1, f16, e4m3, 256, 16, 80},
    // pao's kernels after issue #38's cuts (tools/scripts/cuda_registers.py --rows, 2026-12-06)
    {pao_cuda, v1, f16, f16, 64, 16, 80},
    {pao_cuda, v1, f16, f16, 128, 8, 72},
    {pao_cuda, v1, f16, f16, 128, 16, 96},
    {pao_cuda, v1, f16, f16, 128, 32, 95},
    {pao_cuda, v1, f16, f16, 256, 16, 96},
    {pao_cuda, v1, bf16, bf16, 64, 16, 72},
    {pao_cuda, v1, bf16, bf16, 128, 8, 80},
    {pao_cuda, v1, bf16, bf16, 128, 16, 96},
    {pao_cuda, v1, bf16, bf16, 128, 32, 96},
    {pao_cuda, v1, bf16, bf16, 256, 16, 96},
    {pao_cuda, v1, f16, e4m3, 64, 16, 72},
    {pao_cuda, v1, f16, e4m3, 128, 8, 72},
    {pao_cuda, v1, f16, e4m3, 128, 16, 72},
    {pao_cuda, v1, f16, e4m3, 128, 32, 80},
    {pao_cuda, v1, f16, e4m3, 256, 16, 72},
};

/// How far an instance is from the workload: dtypes first, then head size, then block size.
long distance(const Instance& i, KernelImplementation implementation, KernelVariant kernel,
              const Workload& w) {
  if (i.implementation != implementation) return -1;
  // pao's attention kernel is one kernel for V1 and V2 (its partition size is a run-time value).
  if (!is_pao_cuda(implementation) && i.kernel != kernel) return -1;
  const bool same_dtypes = i.dtype == w.dtype && i.cache == w.kv_cache_dtype;
  const bool f16_fallback = i.dtype == f16 && i.cache == f16;
  if (!same_dtypes && !f16_fallback) return -1;
  return (same_dtypes ? 0L : 1L << 40) + std::labs(i.head_size - w.head_size) * 1024L +
         std::labs(i.block_size - w.block_size);
}

}  // namespace

std::int32_t decode_registers_per_thread(KernelImplementation implementation, KernelVariant kernel,
                                         const Workload& w) {
  const Instance* best = nullptr;
  long best_distance = 0;
  for (const auto& i : kMeasured) {
    const long d = distance(i, implementation, kernel, w);
    if (d >= 0 && (best == nullptr || d < best_distance)) {
      best = &i;
      best_distance = d;
    }
  }
  return best->registers;  // every implementation has f16 rows of both kernels
}

}  // namespace pao::sim

// The shared numerics evaluated on the GPU, so the harness can compare them with the CPU before
// any kernel: pao's kernel_exp / kernel_tanh (compiled for the device with --fmad=false), the
// hardware roundings to f16 / bf16 the kernels use, and every f16 / bf16 / fp8 decode.
#pragma once

#include <cstdint>
#include <vector>

namespace pao::cuda::check {

struct DeviceMath {
  std::vector<float> exp, tanh;                   // kernel_exp(x), kernel_tanh(x) per input
  std::vector<std::uint16_t> f16, bf16;           // __float2half_rn(x), __float2bfloat16_rn(x) bits per input
  std::vector<float> f16_decoded;                 // all 65536 f16 codes through the kernels' decode
  std::vector<float> bf16_decoded;                // all 65536 bf16 codes
  std::vector<float> e4m3_decoded, e5m2_decoded;  // all 256 codes
};

/// Throws CudaError (gpu_decode.hpp) on a CUDA error.
DeviceMath run_device_math(const std::vector<float>& inputs);

}  // namespace pao::cuda::check

// Stand-in for <torch/all.h> where vLLM's attention headers include it (tools/gpgpusim/vllm/):
// the kernels use none of torch; the headers name TORCH_CHECK (host code) and c10::Float8_e4m3fn
// (a float -> fp8 conversion the decode kernels do not call). pao's own declarations, no torch code.
#pragma once

#include <cuda_fp8.h>

#include <cstdint>
#include <stdexcept>

#define TORCH_CHECK(cond, ...)                                           \
  do {                                                                   \
    if (!(cond)) throw std::runtime_error("TORCH_CHECK failed: " #cond); \
  } while (0)

namespace c10 {
struct Float8_e4m3fn {
  struct from_bits_t {};
  static constexpr __host__ __device__ from_bits_t from_bits() { return {}; }
  std::uint8_t x = 0;
  Float8_e4m3fn() = default;
  constexpr __host__ __device__ Float8_e4m3fn(std::uint8_t bits, from_bits_t) : x(bits) {}
  /// Round to nearest even, saturating (quant_utils.cuh's path below sm_80).
  explicit __host__ __device__ Float8_e4m3fn(float v)
      : x(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3)) {}
};
}  // namespace c10

// A CPU emulation of the CUDA execution model, just enough to run pao's kernel sources
// (paged_attention_decode.cuh, prefix_attention.cuh) thread by thread in the CPU tests:
//  - a CTA's threads are fibers on the calling OS thread, scheduled cooperatively; one CTA runs
//    at a time, so `__shared__` arrays are function statics and dynamic shared memory one buffer;
//  - __syncthreads, __syncthreads_or and the warp shuffles are barriers: a shuffle completes when
//    all 32 lanes of the warp have arrived, and each lane receives its partner's value;
//  - device intrinsics are their IEEE definitions on host fp32 (the tests build with
//    -ffp-contract=off): __fmul_rn(a, b) = a * b, __fmaf_rn = std::fma, __fdiv_rn = a / b;
//  - f16 / bf16 conversions are pao's codecs (formats.hpp). pao-cuda-check's device math check
//    compares these with the GPU's hardware conversions, bit for bit, on a real GPU.
// So the emulation checks the kernels' logic — indexing, reduction trees, rounding points, edge
// cases — against the oracle without a GPU. It says nothing about nvcc's code generation, timing
// or memory-model subtleties (a missing __syncthreads may go unnoticed: fibers run in order).
//
// Include this header before a kernel source; then emulation::launch(grid, block, shared_bytes,
// [&] { kernel<...>(args); }) runs every CTA of the grid.
#pragma once

#define PAO_CUDA_EMULATION 1

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

#include "pao/numerics/formats.hpp"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

namespace pao::cuda::emulation {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

const Dim3& thread_idx();
const Dim3& block_idx();
const Dim3& block_dim();
const Dim3& grid_dim();

/// Runs `kernel` once per thread of every CTA of `grid`, CTAs in linear grid order, with
/// `dynamic_shared_bytes` of (16-byte aligned, NaN-filled) dynamic shared memory. Throws
/// std::runtime_error on a deadlock (threads waiting at barriers that can never complete, e.g. a
/// shuffle some lanes of a warp never reach).
void launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes, const std::function<void()>& kernel);

void sync_threads();
int sync_threads_or(int predicate);
/// The value of lane (lane ^ lane_mask) / lane src_lane of the calling thread's warp.
float shfl_xor(float value, int lane_mask);
float shfl(float value, int src_lane);
float* dynamic_shared();

}  // namespace pao::cuda::emulation

#define threadIdx (::pao::cuda::emulation::thread_idx())
#define blockIdx (::pao::cuda::emulation::block_idx())
#define blockDim (::pao::cuda::emulation::block_dim())
#define gridDim (::pao::cuda::emulation::grid_dim())

inline void __syncthreads() { pao::cuda::emulation::sync_threads(); }
inline int __syncthreads_or(int predicate) { return pao::cuda::emulation::sync_threads_or(predicate); }
inline float __shfl_xor_sync(unsigned, float value, int lane_mask) {
  return pao::cuda::emulation::shfl_xor(value, lane_mask);
}
inline float __shfl_sync(unsigned, float value, int src_lane) {
  return pao::cuda::emulation::shfl(value, src_lane);
}

inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

struct __half {
  std::uint16_t bits;
};
struct __nv_bfloat16 {
  std::uint16_t bits;
};
inline __half __ushort_as_half(unsigned short bits) { return {bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline float __half2float(__half h) { return pao::decode_f16(h.bits); }
inline __half __float2half_rn(float x) { return {pao::encode_f16_from_f32(x)}; }
// f16 arithmetic, one rounding each: the exact product or sum of two f16 values, through fp32 (a
// product is exact there; a sum rounded to fp32 first rounds to the same f16: 24 >= 2 * 11 + 2).
inline __half __hmul_rn(__half a, __half b) { return __float2half_rn(__half2float(a) * __half2float(b)); }
inline __half __hadd_rn(__half a, __half b) { return __float2half_rn(__half2float(a) + __half2float(b)); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }
inline __nv_bfloat16 __float2bfloat16_rn(float x) { return {pao::encode_bf16_from_f32(x)}; }

struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};

namespace pao::cuda::detail {
inline float* dynamic_shared_memory() { return emulation::dynamic_shared(); }
}  // namespace pao::cuda::detail

// Kernels that evaluate the kernels' shared numerics element by element (see device_math.hpp).
#include <cuda_runtime.h>

#include "check/device_math.hpp"
#include "check/gpu_run.hpp"
#include "kernels/paged_attention_decode.cuh"

namespace pao::cuda::check {

namespace {

__global__ void math_kernel(const float* x, std::size_t n, float* e, float* t, std::uint16_t* h,
                            std::uint16_t* b) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  e[i] = pao::kernel_exp(x[i]);
  t[i] = pao::kernel_tanh(x[i]);
  h[i] = detail::from_float<DType::f16>(x[i]);
  b[i] = detail::from_float<DType::bf16>(x[i]);
}

__global__ void decode_kernel(float* f16, float* bf16, float* e4m3, float* e5m2) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  f16[i] = detail::to_float<DType::f16>(static_cast<std::uint16_t>(i));
  bf16[i] = detail::to_float<DType::bf16>(static_cast<std::uint16_t>(i));
  if (i < 256) {
    e4m3[i] = detail::to_float<DType::fp8_e4m3>(static_cast<std::uint8_t>(i));
    e5m2[i] = detail::to_float<DType::fp8_e5m2>(static_cast<std::uint8_t>(i));
  }
}

void check(cudaError_t e, const char* what) { throw_if_cuda_error(static_cast<int>(e), what); }

template <typename T>
struct Device {
  T* ptr = nullptr;
  explicit Device(std::size_t n) { check(cudaMalloc(&ptr, (n ? n : 1) * sizeof(T)), "cudaMalloc"); }
  ~Device() { cudaFree(ptr); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  std::vector<T> get(std::size_t n) const {
    std::vector<T> v(n);
    check(cudaMemcpy(v.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return v;
  }
};

}  // namespace

DeviceMath run_device_math(const std::vector<float>& inputs) {
  const std::size_t n = inputs.size();
  Device<float> x(n), e(n), t(n);
  Device<std::uint16_t> h(n), b(n);
  check(cudaMemcpy(x.ptr, inputs.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  if (n) math_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x.ptr, n, e.ptr, t.ptr, h.ptr, b.ptr);
  Device<float> f16(65536), bf16(65536), e4m3(256), e5m2(256);
  decode_kernel<<<256, 256>>>(f16.ptr, bf16.ptr, e4m3.ptr, e5m2.ptr);
  check(cudaGetLastError(), "launching the math kernels");
  check(cudaDeviceSynchronize(), "running the math kernels");
  DeviceMath m;
  m.exp = e.get(n);
  m.tanh = t.get(n);
  m.f16 = h.get(n);
  m.bf16 = b.get(n);
  m.f16_decoded = f16.get(65536);
  m.bf16_decoded = bf16.get(65536);
  m.e4m3_decoded = e4m3.get(256);
  m.e5m2_decoded = e5m2.get(256);
  return m;
}

}  // namespace pao::cuda::check

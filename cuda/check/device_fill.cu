// A grid-stride fill of 1-, 2- or 4-byte elements (check/device_fill.hpp). Plain CUDA, sm_70 and up.
#include "check/device_fill.hpp"

namespace pao::cuda::check {

namespace {

template <typename T>
__global__ void fill_kernel(T* dst, std::size_t n, T value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = value;
}

template <typename T>
cudaError_t fill(void* dst, std::size_t bytes, T value, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(T);
  if (n == 0) return cudaSuccess;
  constexpr unsigned kThreads = 256;
  // Enough CTAs to fill every SM many times over; the grid-stride loop does the rest.
  const std::size_t ctas = (n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(ctas < 65535 ? ctas : 65535);
  fill_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<T*>(dst), n, value);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_device_pattern(void* dst, std::size_t bytes, std::uint32_t pattern, int element_size,
                                cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return cudaMemsetAsync(dst, static_cast<int>(pattern & 0xffu), bytes, stream);
    case 2:
      return fill<std::uint16_t>(dst, bytes, static_cast<std::uint16_t>(pattern & 0xffffu), stream);
    case 4:
      return fill<std::uint32_t>(dst, bytes, pattern, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace pao::cuda::check

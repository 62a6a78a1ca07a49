// Filling device memory with one element's bytes repeated, at memory speed (cudaMemset sets
// bytes only; an f16 1/16 is 0x2C00): what a benchmark case the device fills needs
// (bench/filled_case.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace pao::cuda::check {

/// Writes the low `element_size` bytes (1, 2 or 4) of `pattern` (little-endian) at every element of
/// `bytes` bytes from `dst` (a multiple of element_size, dst aligned to it), on `stream`, without
/// waiting. Returns the launch's error.
cudaError_t fill_device_pattern(void* dst, std::size_t bytes, std::uint32_t pattern, int element_size,
                                cudaStream_t stream = nullptr);

}  // namespace pao::cuda::check

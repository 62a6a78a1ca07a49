// CUDA runtime errors as pao::cuda::Status, and the dynamic shared-memory opt-in of a kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "pao/cuda/status.hpp"

namespace pao::cuda::detail {

/// Success, or "<what>: <CUDA error name>: <CUDA error string>".
Status cuda_status(cudaError_t error, const char* what);

/// Checks that `dynamic_bytes` of shared memory plus the kernel's static shared memory fit one CTA
/// on the current device and raises the kernel's dynamic limit past 48 KiB when needed. `hint`
/// ends the error message: what to change.
Status prepare_shared_memory(const void* kernel, std::size_t dynamic_bytes, const char* kernel_name,
                             const char* hint);

}  // namespace pao::cuda::detail

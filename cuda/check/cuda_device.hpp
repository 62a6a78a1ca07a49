// The CUDA runtime's errors as exceptions, and whether there is a device at all: what every CUDA
// tool of pao (pao-cuda-check, pao-cuda-bench, pao-cuda-probe) asks first.
#pragma once

#include <string>

#include "pao/core/error.hpp"

namespace pao::cuda::check {

/// A CUDA runtime error (allocation, copy, a fault inside a kernel): the context may be unusable,
/// so the harness stops. Launcher Status failures are plain pao::Error.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// Throws CudaError("<what>: <name>: <string>") unless e == cudaSuccess (an int: cudaError_t).
void throw_if_cuda_error(int error, const char* what);

/// Whether a CUDA device can be used; if not, `why` says why (driver missing, no device...).
bool cuda_device_available(std::string& why);
/// "NVIDIA H200 (sm_90, 132 SMs)".
std::string cuda_device_name();

}  // namespace pao::cuda::check

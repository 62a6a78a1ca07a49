// CUDA runtime errors as Status, and the dynamic shared-memory opt-in shared by every launcher.
#include <string>

#include "launch/cuda_status.hpp"

namespace pao::cuda::detail {

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return {};
  return Status::failure(std::string(what) + ": " + cudaGetErrorName(error) + ": " +
                         cudaGetErrorString(error));
}

Status prepare_shared_memory(const void* kernel, std::size_t dynamic_bytes, const char* kernel_name,
                             const char* hint) {
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "cudaGetDevice"); !s.ok()) return s;
  int optin = 0;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
      !s.ok())
    return s;
  cudaFuncAttributes attributes{};
  if (Status s = cuda_status(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes"); !s.ok())
    return s;
  const std::size_t total = dynamic_bytes + attributes.sharedSizeBytes;
  if (total > static_cast<std::size_t>(optin)) {
    return Status::failure(std::string(kernel_name) + " kernel: needs " + std::to_string(total) +
                           " bytes of shared memory per CTA (" + std::to_string(dynamic_bytes) +
                           " dynamic), the device allows " + std::to_string(optin) + "; " + hint);
  }
  if (dynamic_bytes > 48 * 1024) {
    return cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(dynamic_bytes)),
                       "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  }
  return {};
}

}  // namespace pao::cuda::detail

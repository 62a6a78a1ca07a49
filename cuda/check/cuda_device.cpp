#include "check/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <sstream>

namespace pao::cuda::check {

void throw_if_cuda_error(int error, const char* what) {
  const auto e = static_cast<cudaError_t>(error);
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

bool cuda_device_available(std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    return false;
  }
  if (count == 0) {
    why = "cudaGetDeviceCount: no CUDA device";
    return false;
  }
  return true;
}

std::string cuda_device_name() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "unknown CUDA device";
  std::ostringstream os;
  os << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs)";
  return os.str();
}

}  // namespace pao::cuda::check

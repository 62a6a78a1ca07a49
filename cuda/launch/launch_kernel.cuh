// One launch of a pao kernel, the one sequence the decode, reduce and prefix launchers share:
// the device's shared-memory limit checked (and raised past 48 KiB) for the kernel, the grid and
// block of its KernelLaunch, the launch, and its error as a Status. Included by .cu files only.
#pragma once

#include <string>

#include "launch/cuda_status.hpp"
#include "pao/cuda/kernel_launch.hpp"

namespace pao::cuda::detail {

/// kernel<<<launch>>>(args) on `stream`. `name` names the kernel in errors ("paged attention");
/// `hint` ends a shared-memory error: what to change.
template <typename Args>
Status launch_kernel(void (*kernel)(Args), const Args& args, const KernelLaunch& launch, cudaStream_t stream,
                     const char* name, const char* hint) {
  if (Status s = prepare_shared_memory(reinterpret_cast<const void*>(kernel), launch.dynamic_shared_bytes,
                                       name, hint);
      !s.ok())
    return s;
  const dim3 grid(launch.grid.x, launch.grid.y, launch.grid.z);
  const dim3 block(launch.block.x, launch.block.y, launch.block.z);
  kernel<<<grid, block, launch.dynamic_shared_bytes, stream>>>(args);
  const std::string what = std::string("launching the ") + name + " kernel";
  return cuda_status(cudaGetLastError(), what.c_str());
}

}  // namespace pao::cuda::detail

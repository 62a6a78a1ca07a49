// Definition of launch_prefix_attention: head size through the dispatcher, the shared-memory limit
// of the device, the launch. Included only by instances/prefix_*.cu.
#pragma once

#include "kernels/prefix_attention.cuh"
#include "launch/cuda_status.hpp"
#include "launch/prefix_launchers.hpp"
#include "pao/cuda/dispatch.hpp"

namespace pao::cuda::detail {

template <DType Q, DType C>
Status launch_prefix_attention(const PrefixKernelArgs& args, const KernelLaunch& launch,
                               cudaStream_t stream) {
  return dispatch_head_size(args.p.head_size, [&]<std::int32_t HS>() {
    const auto kernel = prefix_attention_kernel<HS, Q, C>;
    if (Status s = prepare_shared_memory(reinterpret_cast<const void*>(kernel), launch.dynamic_shared_bytes,
                                         "prefix attention",
                                         "the K/V tile of max(block_n, context_tile) keys is the bulk: use "
                                         "smaller tiles");
        !s.ok())
      return s;
    const dim3 grid(launch.grid.x, launch.grid.y, launch.grid.z);
    const dim3 block(launch.block.x, launch.block.y, launch.block.z);
    kernel<<<grid, block, launch.dynamic_shared_bytes, stream>>>(args);
    return cuda_status(cudaGetLastError(), "launching the prefix attention kernel");
  });
}

}  // namespace pao::cuda::detail

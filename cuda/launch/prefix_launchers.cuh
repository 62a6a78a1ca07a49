// Definition of launch_prefix_attention: head size through the dispatcher, the shared-memory limit
// of the device, the launch. Included only by instances/prefix_*.cu.
#pragma once

#include "kernels/prefix_attention.cuh"
#include "launch/cuda_status.hpp"
#include "launch/launch_kernel.cuh"
#include "launch/prefix_launchers.hpp"
#include "pao/cuda/dispatch.hpp"

namespace pao::cuda::detail {

template <DType Q, DType C>
Status launch_prefix_attention(const PrefixKernelArgs& args, const KernelLaunch& launch,
                               cudaStream_t stream) {
  return dispatch_head_size(args.p.head_size, [&]<std::int32_t HS>() {
    return launch_kernel(prefix_attention_kernel<HS, Q, C>, args, launch, stream, "prefix attention",
                         "the K/V tile of max(block_n, context_tile) keys is the bulk: use smaller tiles");
  });
}

}  // namespace pao::cuda::detail

// Definition of launch_decode_attention: head size and block size through the dispatcher, the
// shared-memory limit of the device, the launch. Included only by instances/*.cu.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/paged_attention_decode.cuh"
#include "launch/cuda_status.hpp"
#include "launch/decode_launchers.hpp"
#include "pao/cuda/dispatch.hpp"

namespace pao::cuda::detail {

template <DType Q, DType C>
Status launch_decode_attention(const DecodeKernelArgs& args, const KernelLaunch& launch,
                               cudaStream_t stream) {
  return dispatch_head_and_block(
      args.p.head_size, args.p.block_size, [&]<std::int32_t HS, std::int32_t BS>() {
        const auto kernel = decode_attention_kernel<HS, BS, Q, C>;
        if (Status s = prepare_shared_memory(
                reinterpret_cast<const void*>(kernel), launch.dynamic_shared_bytes, "paged attention",
                "the logits of max_seq_len (V1) or partition_size (V2) tokens are the "
                "bulk: use V2, or a smaller partition");
            !s.ok())
          return s;
        const dim3 grid(launch.grid.x, launch.grid.y, launch.grid.z);
        const dim3 block(launch.block.x, launch.block.y, launch.block.z);
        kernel<<<grid, block, launch.dynamic_shared_bytes, stream>>>(args);
        return cuda_status(cudaGetLastError(), "launching the paged attention kernel");
      });
}

}  // namespace pao::cuda::detail

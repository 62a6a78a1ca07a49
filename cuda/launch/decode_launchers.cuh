// Definition of launch_decode_attention: head size and block size through the dispatcher, the
// shared-memory limit of the device, the launch. Included only by instances/*.cu.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/paged_attention_decode.cuh"
#include "launch/cuda_status.hpp"
#include "launch/decode_launchers.hpp"
#include "launch/launch_kernel.cuh"
#include "pao/cuda/dispatch.hpp"

namespace pao::cuda::detail {

template <DType Q, DType C>
Status launch_decode_attention(const DecodeKernelArgs& args, const KernelLaunch& launch,
                               cudaStream_t stream) {
  return dispatch_head_and_block(
      args.p.head_size, args.p.block_size, [&]<std::int32_t HS, std::int32_t BS>() {
        return launch_kernel(decode_attention_kernel<HS, BS, Q, C>, args, launch, stream, "paged attention",
                             "the logits of max_seq_len (V1) or partition_size (V2) tokens are the bulk: use "
                             "V2, or a smaller partition");
      });
}

}  // namespace pao::cuda::detail

// Launchers of the decode kernels for one (activation dtype, cache dtype) pair. Declared here,
// defined in decode_launchers.cuh and instantiated once per pair in instances/*.cu, so that the
// pairs compile in parallel; the runtime -> template mapping stays in pao/cuda/dispatch.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/decode_kernel_args.hpp"
#include "pao/core/dtype.hpp"
#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/status.hpp"

namespace pao::cuda::detail {

/// Launches decode_attention_kernel<head_size, block_size, Q, C> (V1 or a V2 partition pass).
template <DType Q, DType C>
Status launch_decode_attention(const DecodeKernelArgs& args, const KernelLaunch& launch, cudaStream_t stream);

}  // namespace pao::cuda::detail

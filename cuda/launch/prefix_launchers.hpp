// Launchers of the prefix kernel for one (activation dtype, cache dtype) pair: declared here,
// defined in prefix_launchers.cuh, instantiated in instances/prefix_*.cu.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/prefix_kernel_args.hpp"
#include "pao/core/dtype.hpp"
#include "pao/cuda/kernel_launch.hpp"
#include "pao/cuda/status.hpp"

namespace pao::cuda::detail {

/// Launches prefix_attention_kernel<head_size, Q, C>.
template <DType Q, DType C>
Status launch_prefix_attention(const PrefixKernelArgs& args, const KernelLaunch& launch, cudaStream_t stream);

}  // namespace pao::cuda::detail

// Prefix kernels for f32 activations (f32, fp8_e4m3 and fp8_e5m2 caches).
#include "launch/prefix_launchers.cuh"

namespace pao::cuda::detail {
template Status launch_prefix_attention<DType::f32, DType::f32>(const PrefixKernelArgs&, const KernelLaunch&,
                                                                cudaStream_t);
template Status launch_prefix_attention<DType::f32, DType::fp8_e4m3>(const PrefixKernelArgs&,
                                                                     const KernelLaunch&, cudaStream_t);
template Status launch_prefix_attention<DType::f32, DType::fp8_e5m2>(const PrefixKernelArgs&,
                                                                     const KernelLaunch&, cudaStream_t);
}  // namespace pao::cuda::detail

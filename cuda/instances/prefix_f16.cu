// Prefix kernels for f16 activations (f16, fp8_e4m3 and fp8_e5m2 caches).
#include "launch/prefix_launchers.cuh"

namespace pao::cuda::detail {
template Status launch_prefix_attention<DType::f16, DType::f16>(const PrefixKernelArgs&, const KernelLaunch&,
                                                                cudaStream_t);
template Status launch_prefix_attention<DType::f16, DType::fp8_e4m3>(const PrefixKernelArgs&,
                                                                     const KernelLaunch&, cudaStream_t);
template Status launch_prefix_attention<DType::f16, DType::fp8_e5m2>(const PrefixKernelArgs&,
                                                                     const KernelLaunch&, cudaStream_t);
}  // namespace pao::cuda::detail

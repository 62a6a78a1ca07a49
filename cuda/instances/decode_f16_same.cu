// Decode kernels for f16 activations with a f16 KV cache (one translation unit per dtype pair).
#include "launch/decode_launchers.cuh"

namespace pao::cuda::detail {
template Status launch_decode_attention<DType::f16, DType::f16>(const DecodeKernelArgs&, const KernelLaunch&,
                                                                cudaStream_t);
}  // namespace pao::cuda::detail

// Decode kernels for f32 activations with a f32 KV cache (one translation unit per dtype pair).
#include "launch/decode_launchers.cuh"

namespace pao::cuda::detail {
template Status launch_decode_attention<DType::f32, DType::f32>(const DecodeKernelArgs&, const KernelLaunch&,
                                                                cudaStream_t);
}  // namespace pao::cuda::detail

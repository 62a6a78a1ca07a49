// Decode kernels for bf16 activations with a fp8_e5m2 KV cache (one translation unit per dtype pair).
#include "launch/decode_launchers.cuh"

namespace pao::cuda::detail {
template Status launch_decode_attention<DType::bf16, DType::fp8_e5m2>(const DecodeKernelArgs&,
                                                                      const KernelLaunch&, cudaStream_t);
}  // namespace pao::cuda::detail

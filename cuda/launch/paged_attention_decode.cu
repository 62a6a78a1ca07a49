// The host entry points of the CUDA decode kernels: check the launch against the plan
// (decode_launch.hpp), pick the instantiation for the dtypes (dispatch.hpp), launch; the V2
// reduce kernel is instantiated here (it is templated on the activation dtype only).
#include <cstdio>
#include <string>

#include "kernels/paged_attention_decode.cuh"
#include "launch/cuda_status.hpp"
#include "launch/decode_launchers.hpp"
#include "launch/launch_kernel.cuh"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/paged_attention_cuda.hpp"

namespace pao::cuda {

namespace detail {

namespace {

Status launch_attention(const DecodeParams& params, const DecodeLaunch& launch, cudaStream_t stream) {
  if (launch.attention.grid.count() == 0) return {};  // no sequences: nothing to launch
  const DecodeKernelArgs args = make_decode_kernel_args(params, launch);
  return dispatch_dtypes(params.dtype, params.kv_cache_dtype, [&]<DType Q, DType C>() {
    return launch_decode_attention<Q, C>(args, launch.attention, stream);
  });
}

Status launch_reduce(const DecodeParams& params, const DecodeLaunch& launch, cudaStream_t stream) {
  if (launch.reduce.grid.count() == 0) return {};
  const DecodeKernelArgs args = make_decode_kernel_args(params, launch);
  return dispatch_activation(params.dtype, [&]<DType Q>() {
    return launch_kernel(decode_reduce_kernel<Q>, args, launch.reduce, stream, "paged attention V2 reduce",
                         "2 floats per partition: use a larger partition_size");
  });
}

Status checked_launch(const DecodeParams& params, const DecodePlan& plan, KernelVariant expected,
                      DecodeLaunch& launch) {
  if (plan.kernel != expected)
    return Status::failure("plan: made for paged attention " + to_string(plan.kernel) + ", called for " +
                           to_string(expected));
  return make_decode_launch(params, plan, launch);
}

}  // namespace

}  // namespace detail

Status paged_attention_v1(const DecodeParams& params, const DecodePlan& plan, cudaStream_t stream) {
  DecodeLaunch launch;
  if (Status s = detail::checked_launch(params, plan, KernelVariant::v1, launch); !s.ok()) return s;
  return detail::launch_attention(params, launch, stream);
}

Status paged_attention_v2(const DecodeParams& params, const DecodePlan& plan, cudaStream_t stream) {
  DecodeLaunch launch;
  if (Status s = detail::checked_launch(params, plan, KernelVariant::v2, launch); !s.ok()) return s;
  if (Status s = detail::launch_attention(params, launch, stream); !s.ok()) return s;
  return detail::launch_reduce(params, launch, stream);
}

Status paged_attention_v2_reduce(const DecodeParams& params, const DecodePlan& plan, cudaStream_t stream) {
  DecodeLaunch launch;
  if (Status s = detail::checked_launch(params, plan, KernelVariant::v2, launch); !s.ok()) return s;
  return detail::launch_reduce(params, launch, stream);
}

}  // namespace pao::cuda

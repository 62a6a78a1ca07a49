// The host entry point of the CUDA prefix kernel: check the launch against the plan, upload the
// plan's tables, pick the instantiation for the dtypes, launch.
#include "kernels/prefix_attention.cuh"
#include "launch/cuda_status.hpp"
#include "launch/prefix_launchers.hpp"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/prefix_attention_cuda.hpp"

namespace pao::cuda {

Status prefix_attention(const PrefixParams& params, const PrefixPlan& plan, cudaStream_t stream) {
  PrefixLaunch launch;
  if (Status s = make_prefix_launch(params, plan, launch); !s.ok()) return s;
  if (launch.kernel.grid.count() == 0) return {};

  const std::size_t cta_bytes = launch.ctas.size() * sizeof(PrefixDeviceCta);
  const std::size_t tile_bytes = launch.tiles.size() * sizeof(PrefixDeviceTile);
  void* tables = nullptr;
  if (Status s = detail::cuda_status(cudaMallocAsync(&tables, cta_bytes + tile_bytes + 1, stream),
                                     "cudaMallocAsync (prefix plan tables)");
      !s.ok())
    return s;
  auto* ctas = static_cast<PrefixDeviceCta*>(tables);
  auto* tiles = reinterpret_cast<PrefixDeviceTile*>(static_cast<char*>(tables) + cta_bytes);
  Status status = detail::cuda_status(
      cudaMemcpyAsync(ctas, launch.ctas.data(), cta_bytes, cudaMemcpyHostToDevice, stream),
      "uploading the plan");
  if (status.ok() && tile_bytes)
    status = detail::cuda_status(
        cudaMemcpyAsync(tiles, launch.tiles.data(), tile_bytes, cudaMemcpyHostToDevice, stream),
        "uploading the plan");
  if (status.ok()) {
    detail::PrefixKernelArgs args;
    args.p = params;
    args.ctas = ctas;
    args.tiles = tiles;
    args.max_tile_width = launch.max_tile_width;
    status = dispatch_dtypes(params.dtype, params.kv_cache_dtype, [&]<DType Q, DType C>() {
      return detail::launch_prefix_attention<Q, C>(args, launch.kernel, stream);
    });
  }
  // Stream-ordered: freed after the kernel has run. The host vectors were staged by the copies.
  const Status freed =
      detail::cuda_status(cudaFreeAsync(tables, stream), "cudaFreeAsync (prefix plan tables)");
  return status.ok() ? freed : status;
}

}  // namespace pao::cuda

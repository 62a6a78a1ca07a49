// Host API of the CUDA decode kernels: vLLM's paged attention V1, V2 and V2's reduce, computing
// pao's kernel precision (docs/numerics.md) bit for bit, with warp 32 and 128 threads per CTA.
// Grids come from pao's plan (plan_decode_launch below). Every function returns a Status:
// invalid parameters, unsupported values and CUDA errors are reported, never exit()ed.
// Launches are asynchronous on `stream`; a fault inside a kernel shows at the next
// synchronisation, as with any CUDA launch.
//
// Usage:
//   pao::DecodePlan plan;
//   auto s = pao::cuda::plan_decode_launch(pao::KernelVariant::v2, params, max_seq_len, 512, host_seq_lens,
//   plan); if (s.ok()) s = pao::cuda::paged_attention_v2(params, plan, stream); if (!s.ok())
//   std::fprintf(stderr, "%s\n", s.message().c_str());
#pragma once

#include <cuda_runtime_api.h>

#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/decode_params.hpp"
#include "pao/cuda/status.hpp"
#include "pao/plan/decode_plan.hpp"

namespace pao::cuda {

/// V1: one CTA per (head, sequence) over the whole sequence; writes params.out. Shared memory
/// holds the logits of max_seq_len tokens: beyond the device's limit V1 fails (use V2).
/// \param params  out [num_seqs, num_heads, head_size] is written; the rest is read
/// \param plan    plan_decode_launch(KernelVariant::v1, ...) for these params
Status paged_attention_v1(const DecodeParams& params, const DecodePlan& plan, cudaStream_t stream = nullptr);

/// V2: one CTA per (head, sequence, partition), then the reduce. Writes tmp_out
/// [num_seqs, num_heads, max_num_partitions, head_size], max_logits and exp_sums
/// [num_seqs, num_heads, max_num_partitions] (partitions at or past a sequence's end: 0, -inf, 0)
/// and out.
Status paged_attention_v2(const DecodeParams& params, const DecodePlan& plan, cudaStream_t stream = nullptr);

/// V2's reduce alone, on partials already in params.tmp_out / max_logits / exp_sums; writes out.
Status paged_attention_v2_reduce(const DecodeParams& params, const DecodePlan& plan,
                                 cudaStream_t stream = nullptr);

}  // namespace pao::cuda

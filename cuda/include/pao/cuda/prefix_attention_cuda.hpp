// Host API of the CUDA prefix (chunked-prefill) kernel: vLLM's context_attention_fwd computing
// pao's prefix kernel precision (docs/prefix.md) bit for bit. The grid and every CTA's K tiles
// come from pao's plan (plan_prefix_launch); errors are returned as a Status.
//
//   pao::PrefixPlan plan;
//   auto s = pao::cuda::plan_prefix_launch(params, seq_lens, query_lens, 128, 64, 32, 0, plan);
//   if (s.ok()) s = pao::cuda::prefix_attention(params, plan, stream);
#pragma once

#include <cuda_runtime_api.h>

#include "pao/cuda/prefix_launch.hpp"
#include "pao/cuda/prefix_params.hpp"
#include "pao/cuda/status.hpp"
#include "pao/plan/prefix_plan.hpp"

namespace pao::cuda {

/// Writes out [num_tokens, num_heads, head_size]. Uploads the plan's CTA and tile tables to
/// stream-ordered device memory (cudaMallocAsync), launches, and frees them on the stream.
/// Dynamic shared memory per CTA: prefix_shared_bytes(head_size, max(block_n, context_tile)).
Status prefix_attention(const PrefixParams& params, const PrefixPlan& plan, cudaStream_t stream = nullptr);

}  // namespace pao::cuda

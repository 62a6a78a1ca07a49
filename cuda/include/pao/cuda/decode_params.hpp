// DecodeParams: everything one decode launch reads and writes — device pointers, sizes, element
// strides and scalars, with vLLM's names (FlashAttention's "one params struct per op"): the paged
// cache and scalars of PagedAttentionParams, plus the query, seq_lens and the outputs. Plain
// C++: the host checks it (decode_launch.hpp) without a GPU.
#pragma once

#include <cstdint>

#include "pao/cuda/attention_params.hpp"

namespace pao::cuda {

struct DecodeParams : PagedAttentionParams {
  /// query [num_seqs, num_heads, head_size], any element strides.
  const void* query = nullptr;
  std::int64_t query_seq_stride = 0;
  std::int64_t query_head_stride = 0;
  std::int64_t query_dim_stride = 1;

  /// seq_lens [num_seqs] i32.
  const std::int32_t* seq_lens = nullptr;

  /// out [num_seqs, num_heads, head_size], contiguous, dtype.
  void* out = nullptr;
  /// V2 only, contiguous. tmp_out [num_seqs, num_heads, max_num_partitions, head_size] (dtype);
  /// max_logits, exp_sums [num_seqs, num_heads, max_num_partitions] (f32).
  void* tmp_out = nullptr;
  float* max_logits = nullptr;
  float* exp_sums = nullptr;
};

}  // namespace pao::cuda

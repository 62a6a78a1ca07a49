// K-tiled prefix (chunked-prefill) attention over the paged cache: vLLM's context_attention_fwd
// (vllm/attention/ops/prefix_prefill.py), in exact and kernel precision. New query tokens of a
// batch attend to their sequence's cached context (through the block table) and, causally, to
// the new tokens up to and including themselves. docs/prefix.md defines every step.
#pragma once

#include <cstdint>

#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/plan/kernel_tuning.hpp"

namespace pao {

/// Inputs of a prefix step, with vLLM's names and layouts. Sequence s owns the new tokens
/// [query_start_loc[s], query_start_loc[s + 1]) of query / key / value; its context is the first
/// ctx_len = seq_lens[s] - query_len tokens of its block table.
struct PrefixArgs : PagedKVArgs {
  TensorView query;            // [num_tokens, num_heads, head_size]     f32/f16/bf16
  TensorView key;              // [num_tokens, num_kv_heads, head_size]  the query's dtype
  TensorView value;            // [num_tokens, num_kv_heads, head_size]  the query's dtype
  TensorView query_start_loc;  // [num_seqs + 1] i32, 0 = first <= ... <= last = num_tokens
  /// Sizes the grid's query-tile dimension (vLLM's max_input_len). 0: the longest query_len.
  std::int32_t max_query_len = 0;
  /// Where the new tokens' K/V come from. input: `key` / `value` as given (vLLM's Triton
  /// context_attention_fwd). cache: their slots of the paged cache, dequantised like the context
  /// (FlashAttention-, FlashInfer- and IPEX-based backends, which write the chunk with
  /// reshape_and_cache first); the block table must then cover every token of the sequence.
  /// The two differ only when the cache quantises (fp8).
  NewKVSource new_kv_source = NewKVSource::input;
};

struct PrefixOutputs {
  Tensor out;      // [num_tokens, num_heads, head_size], the query's dtype
  Tensor out_f64;  // exact precision only: `out` before its one rounding
};

/// Runs the prefix kernel with the tiles of `tuning` (block_m, block_n, context_tile; vLLM: 128 / 64
/// when the block size is a power of two, else 32 / 32; context tiles of 32 — its ALiBi kernel uses
/// block_n for both). The prefix kernel's arithmetic (docs/prefix.md) does not depend on the
/// tuning's warp size or threads per CTA. Throws pao::Error naming the tensor, index and rule on
/// bad input.
PrefixOutputs prefix_attention(const PrefixArgs& args, Precision precision, const KernelTuning& tuning);

}  // namespace pao

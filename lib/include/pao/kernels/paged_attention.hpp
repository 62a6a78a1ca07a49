// The decode kernels of the oracle: vLLM's paged attention V1, partitioned V2 and V2's reduce,
// each in exact and kernel precision (see docs/numerics.md).
#pragma once

#include <cstdint>

#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/plan/kernel_tuning.hpp"

namespace pao {

/// Inputs of a decode step, with vLLM's names and layouts.
struct DecodeArgs : PagedKVArgs {
  TensorView query;  // [num_seqs, num_heads, head_size]  f32/f16/bf16
  /// Bounds the number of V2 partitions (vLLM's max_seq_len). 0: the largest of seq_lens.
  std::int32_t max_seq_len = 0;
};

struct DecodeOutputs {
  Tensor out;      // [num_seqs, num_heads, head_size], the query's dtype
  Tensor out_f64;  // exact precision only: `out` before its one rounding
  // V2 only (undefined for V1). Partitions at or past a sequence's end hold tmp_out 0,
  // max_logits -inf and exp_sums 0 (vLLM leaves them unwritten).
  Tensor tmp_out;     // [num_seqs, num_heads, max_num_partitions, head_size], the query's dtype
  Tensor max_logits;  // [num_seqs, num_heads, max_num_partitions] f32
  Tensor exp_sums;    // [num_seqs, num_heads, max_num_partitions] f32
};

/// `tuning`: the kernel precision's GPU (warp_size, threads_per_cta) and V2's partition_size; a
/// case is one (paged_attention_v2(c.args(), precision, c.spec)), KernelTuning{} is vLLM's.
DecodeOutputs paged_attention_v1(const DecodeArgs& args, Precision precision, const KernelTuning& tuning);
DecodeOutputs paged_attention_v2(const DecodeArgs& args, Precision precision, const KernelTuning& tuning);

/// V2's second kernel on its own, so that a vendor's partials can be reduced by the oracle.
struct ReduceArgs {
  TensorView tmp_out;     // [num_seqs, num_heads, max_num_partitions, head_size] f32/f16/bf16
  TensorView max_logits;  // [num_seqs, num_heads, max_num_partitions] f32
  TensorView exp_sums;    // [num_seqs, num_heads, max_num_partitions] f32
  TensorView seq_lens;    // [num_seqs] i32
};

/// Returns `out` (the dtype of tmp_out) and, in exact precision, `out_f64`; the partials are of
/// tuning.partition_size tokens.
DecodeOutputs paged_attention_v2_reduce(const ReduceArgs& args, Precision precision,
                                        const KernelTuning& tuning);

}  // namespace pao

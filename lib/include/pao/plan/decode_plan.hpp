// The plan: kernel parameters in, the list of CTAs the GPU would run out. The CPU kernels execute
// it CTA by CTA, the simulator times it and the CUDA launchers size their grids from it; nobody
// re-derives partitioning on their own.
//
// Decode grids follow vLLM (csrc/attention/paged_attention_v{1,2}.cu):
//   V1      grid (num_heads, num_seqs, 1)                    one CTA walks a whole sequence
//   V2      grid (num_heads, num_seqs, max_num_partitions)   one CTA per partition of
//                                                            `partition_size` tokens
//   reduce  grid (num_heads, num_seqs)                       merges a sequence's partitions
// CTAs are listed in linear grid order (x = head fastest, then seq, then partition), the order in
// which a GPU's block scheduler hands them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pao/plan/kernel_tuning.hpp"
#include "pao/plan/kernel_variant.hpp"
#include "pao/plan/launch_shape.hpp"
#include "pao/plan/partition.hpp"

namespace pao {

/// Everything about a decode launch that decides its decomposition: the shape, the tuning
/// (partition_size for V2, threads_per_cta, warp_size) and max_seq_len.
struct DecodeShape : LaunchShape, KernelTuning {
  std::int32_t max_seq_len = 0;  // bounds max_num_partitions, as in vLLM; 0: the longest seq_len
};

/// One attention CTA. Its tokens are [token_begin, token_end) of sequence `seq`; a V2 partition
/// that starts at or past the sequence's end is empty (token_end <= token_begin) and its CTA returns
/// at once, writing nothing.
struct AttentionCta {
  std::int32_t seq = 0;
  std::int32_t head = 0;
  std::int32_t partition = 0;
  std::int32_t token_begin = 0;
  std::int32_t token_end = 0;

  IndexRange tokens() const { return {token_begin, token_end}; }
  bool empty() const { return tokens().empty(); }
  std::int32_t num_tokens() const { return tokens().size(); }
  /// Logical KV blocks the CTA reads.
  IndexRange blocks(std::int32_t block_size) const { return blocks_of_tokens(tokens(), block_size); }
};

/// One reduce CTA: merges the first `num_partitions` partitions of (seq, head).
struct ReduceCta {
  std::int32_t seq = 0;
  std::int32_t head = 0;
  std::int32_t num_partitions = 0;  // partitions_of_sequence(seq_len, partition_size)
};

struct DecodePlan {
  KernelVariant kernel = KernelVariant::v1;
  DecodeShape shape;
  std::int32_t max_num_partitions = 1;  // pao::max_num_partitions(max_seq_len, partition_size); 1 for V1
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0;
  std::vector<AttentionCta> ctas;
  std::vector<ReduceCta> reduce_ctas;      // V2 only
  std::size_t attention_shared_bytes = 0;  // dynamic shared memory per attention CTA (vLLM's rule)
  std::size_t reduce_shared_bytes = 0;     // per reduce CTA

  std::int32_t num_queries_per_kv() const { return shape.num_queries_per_kv(); }
  std::int32_t kv_head_of(std::int32_t head) const { return shape.kv_head_of(head); }
};

/// max_seq_len as given, or the longest of seq_lens when it is 0 (the one place this rule lives).
std::int32_t resolved_max_seq_len(std::int32_t max_seq_len, std::span<const std::int32_t> seq_lens);

/// Plans V1 or V2 for the given sequence lengths (each in [0, shape.max_seq_len]; max_seq_len 0:
/// the longest, resolved in the plan's shape). Throws pao::Error on inconsistent shapes (heads not
/// divisible, a tuning rule broken: check_tuning, a seq_len beyond max_seq_len).
DecodePlan plan_decode(KernelVariant kernel, const DecodeShape& shape,
                       std::span<const std::int32_t> seq_lens);

}  // namespace pao

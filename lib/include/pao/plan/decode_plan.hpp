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

#include "pao/plan/launch_shape.hpp"
#include "pao/plan/partition.hpp"

namespace pao {

enum class DecodeKernel : std::uint8_t { v1, v2 };

/// Everything about a decode launch that decides its decomposition.
struct DecodeShape : LaunchShape {
  std::int32_t max_seq_len = 0;       // bounds max_num_partitions, as in vLLM
  std::int32_t partition_size = 512;  // V2 only; a multiple of block_size
  std::int32_t threads_per_cta = 128;
  std::int32_t warp_size = 32;
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
  DecodeKernel kernel = DecodeKernel::v1;
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

/// Plans V1 or V2 for the given sequence lengths (each in [0, shape.max_seq_len]).
/// Throws pao::Error on inconsistent shapes (heads not divisible, partition size not a multiple
/// of the block size, a seq_len beyond max_seq_len).
DecodePlan plan_decode(DecodeKernel kernel, const DecodeShape& shape, std::span<const std::int32_t> seq_lens);

std::string to_string(DecodeKernel kernel);

}  // namespace pao

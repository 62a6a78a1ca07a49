// The partition arithmetic of the plans, in one place: integer ceilings, V2's partitions (how many,
// which tokens, which logical KV blocks), the blocks a sequence occupies. The plans (decode_plan.hpp,
// prefix_plan.hpp), the CPU kernels, the simulator, the diff's error locations, the golden metadata
// and the CUDA kernels (host and device: PAO_HD, no CUDA headers) all call these; nobody writes
// `(a + b - 1) / b` on their own.
//
// vLLM (csrc/attention/paged_attention_v2.cu): max_num_partitions = DIVIDE_ROUND_UP(max_seq_len,
// PARTITION_SIZE); partition p of a sequence owns tokens [p * PARTITION_SIZE, min((p + 1) *
// PARTITION_SIZE, seq_len)); the reduce of a sequence merges its DIVIDE_ROUND_UP(seq_len,
// PARTITION_SIZE) partitions.
#pragma once

#include <concepts>
#include <cstdint>

#include "pao/core/hd.hpp"

namespace pao {

/// ceil(a / b) for a >= 0, b > 0, in the width of the arguments (int32 or int64). Written without
/// `a + b - 1`, so that it cannot overflow near the top of the type (a seq_len of 2^31 - 1).
template <std::integral T>
PAO_HD constexpr T ceil_div(T a, T b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// The smallest multiple of `unit` that is >= value (value >= 0, unit > 0).
template <std::integral T>
PAO_HD constexpr T round_up(T value, T unit) {
  return ceil_div(value, unit) * unit;
}

/// A half-open range [begin, end) of tokens or blocks; empty when end <= begin.
struct IndexRange {
  std::int32_t begin = 0;
  std::int32_t end = 0;

  PAO_HD constexpr bool empty() const { return end <= begin; }
  PAO_HD constexpr std::int32_t size() const { return empty() ? 0 : end - begin; }
};

/// Logical KV blocks that hold `num_tokens` tokens: ceil(num_tokens / block_size).
PAO_HD constexpr std::int32_t blocks_for_tokens(std::int32_t num_tokens, std::int32_t block_size) {
  return ceil_div(num_tokens, block_size);
}

/// Logical blocks [first, last + 1) that tokens [begin, end) touch; empty for an empty range.
PAO_HD constexpr IndexRange blocks_of_tokens(IndexRange tokens, std::int32_t block_size) {
  if (tokens.empty()) return {tokens.begin / block_size, tokens.begin / block_size};
  return {tokens.begin / block_size, ceil_div(tokens.end, block_size)};
}

/// V2 partitions a sequence of seq_len tokens fills (0 for an empty sequence): the partitions its
/// reduce CTA merges.
PAO_HD constexpr std::int32_t partitions_of_sequence(std::int32_t seq_len, std::int32_t partition_size) {
  return ceil_div(seq_len, partition_size);
}

/// The partition dimension of V2's launch and of tmp_out / max_logits / exp_sums:
/// ceil(max_seq_len / partition_size), and at least 1 (a grid dimension, and vLLM's tensors, are
/// never empty; with every sequence empty the one partition is past every end).
PAO_HD constexpr std::int32_t max_num_partitions(std::int32_t max_seq_len, std::int32_t partition_size) {
  const std::int32_t n = ceil_div(max_seq_len, partition_size);
  return n > 1 ? n : 1;
}

/// Tokens of partition `partition` of a sequence; partition_size 0 means V1 (one CTA, every token).
/// A partition at or past the sequence's end is empty.
PAO_HD constexpr IndexRange partition_tokens(std::int32_t seq_len, std::int32_t partition_size,
                                             std::int32_t partition) {
  if (partition_size <= 0) return {0, seq_len};
  const std::int32_t begin = partition * partition_size;
  const std::int32_t end = begin + partition_size < seq_len ? begin + partition_size : seq_len;
  return {begin, end};
}

}  // namespace pao

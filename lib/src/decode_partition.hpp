// One unit of decode work: the CTAs of all query heads that share one KV head, for one
// (sequence, partition). Each head's arithmetic is exactly that of its own CTA; grouping them
// only lets the CPU decode each K/V block once for all of them.
#pragma once

#include <cstdint>

#include "decode_problem.hpp"
#include "pao/decode_geometry.hpp"

namespace pao::detail {

struct PartitionTask {
  std::int32_t seq = 0;
  std::int32_t kv_head = 0;
  std::int32_t token_begin = 0;  // [token_begin, token_end), non-empty, block aligned begin
  std::int32_t token_end = 0;
};

/// Per head g of the group (query head kv_head * G + g): the partition's normalised output
/// [G][head_size], its max logit and its sum of exp(logit - max). A partition in which no token
/// is visible has max -inf, sum 0 and output 0.
template <typename T>
struct PartitionResult {
  T* out;
  T* max_logit;
  T* exp_sum;
};

void run_partition_exact(const DecodeProblem& p, const PartitionTask& task, PartitionResult<double> r);

/// The fp32 result before its rounding to the output dtype.
void run_partition_kernel(const DecodeProblem& p, const DecodeGeometry& g, const PartitionTask& task,
                          PartitionResult<float> r);

/// Whether key position `key` is visible to the query at position `query_pos` under a sliding
/// window (0 = no window).
inline bool in_window(std::int32_t query_pos, std::int32_t key, std::int32_t sliding_window) {
  return sliding_window <= 0 || query_pos - key < sliding_window;
}

}  // namespace pao::detail

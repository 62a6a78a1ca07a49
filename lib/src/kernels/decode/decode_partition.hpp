// One unit of decode work: the CTAs of all query heads that share one KV head, for one
// (sequence, partition). Each head's arithmetic is exactly that of its own CTA; grouping them
// only lets the CPU decode each K/V block once for all of them.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/decode/decode_problem.hpp"
#include "kernels/prefix/kv_tile.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/plan/partition.hpp"

namespace pao::detail {

struct PartitionTask {
  std::int32_t seq = 0;
  std::int32_t kv_head = 0;
  std::int32_t token_begin = 0;  // [token_begin, token_end), block aligned begin; non-empty for a partition
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

enum class CacheSide { key, value };

/// Walks the partition's KV blocks of one cache in order, calling
/// fn(logical_block, first_token, num_tokens, physical_block). A paged cache's blocks are
/// scattered, so hardware prefetchers cannot guess the next one; the walk prefetches instead:
/// the K walk asks for K blocks kPrefetchDistance ahead and, for the V walk that follows, for the
/// V block of the same index (to L2: a partition's V blocks fit there), and moves the K block
/// kL1Distance ahead on to L1 (measured faster for pao-bench's exact decode); the V walk
/// moves V blocks to L1 kPrefetchDistance ahead. An empty token range walks nothing.
template <typename Fn>
void for_each_block(const PagedKV& kv, const PartitionTask& task, CacheSide side, Fn fn) {
  constexpr std::int32_t kPrefetchDistance = 4, kL1Distance = 2;
  if (task.token_begin >= task.token_end) return;
  const std::int32_t bs = kv.block_size, hs = kv.head_size;
  const std::int32_t* table = kv.block_table(task.seq);
  const IndexRange blocks = blocks_of_tokens({task.token_begin, task.token_end}, bs);
  const std::int32_t first = blocks.begin, last = blocks.end - 1;
  const bool key = side == CacheSide::key;
  auto prefetch = [&](bool key_side, std::int32_t b, PrefetchTo to) {
    prefetch_tile(key_side ? kv.key_data : kv.value_data, key_side ? kv.key_layout : kv.value_layout,
                  kv.cache_dtype, table[b], task.kv_head, bs, hs, to);
  };
  if (key)  // the walk's first blocks (later ones are prefetched as it goes)
    for (std::int32_t b = first; b < first + kPrefetchDistance && b <= last; ++b)
      prefetch(true, b, PrefetchTo::l2);
  for (std::int32_t b = first; b <= last; ++b) {
    if (b + kPrefetchDistance <= last)
      prefetch(key, b + kPrefetchDistance, key ? PrefetchTo::l2 : PrefetchTo::l1);
    if (key) {
      prefetch(false, b, PrefetchTo::l2);
      if (b + kL1Distance <= last) prefetch(true, b + kL1Distance, PrefetchTo::l1);
    }
    const std::int32_t t0 = b * bs;
    fn(b, t0, std::min(bs, task.token_end - t0), table[b]);
  }
}

}  // namespace pao::detail

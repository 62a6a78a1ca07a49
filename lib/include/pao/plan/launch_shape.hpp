// The shape every attention launch has — sequences, query and KV heads, head size, block size —
// and its rules, one definition for the plans (DecodeShape, PrefixShape), the simulator's
// workloads and the CUDA params: sizes positive, GQA / MQA's num_heads % num_kv_heads == 0, one
// length per sequence.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pao/core/hd.hpp"

namespace pao {

struct LaunchShape {
  std::int32_t num_seqs = 0;
  std::int32_t num_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_size = 0;
  std::int32_t block_size = 16;  // tokens per physical KV block

  /// GQA / MQA: query heads per KV head, and the KV head of a query head.
  PAO_HD std::int32_t num_queries_per_kv() const { return num_heads / num_kv_heads; }
  PAO_HD std::int32_t kv_head_of(std::int32_t head) const { return head / num_queries_per_kv(); }
};

/// Throws pao::Error naming the size and the rule broken.
void check_launch_shape(const LaunchShape& s, std::size_t num_seq_lens);

/// vLLM's decode head sizes (its paged-attention dispatch), the one list decode cases, the
/// simulator's decode workloads and the CUDA kernels accept. Prefix cases take any head size (vLLM's
/// Triton kernel pads it); the CPU kernels themselves compute any.
inline constexpr std::int32_t kSupportedHeadSizes[] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
PAO_HD constexpr bool is_supported_head_size(std::int32_t head_size) {
  for (std::int32_t h : kSupportedHeadSizes)
    if (h == head_size) return true;
  return false;
}
/// "32, 64, 80, 96, 112, 120, 128, 192, 256"
const char* supported_head_sizes_text();
/// Throws pao::Error: "head_size = 100 is not one of vLLM's head sizes (32, 64, ...)".
void check_supported_head_size(std::int32_t head_size);

}  // namespace pao

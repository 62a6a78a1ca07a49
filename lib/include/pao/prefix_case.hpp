// Building prefix (chunked-prefill) inputs from a seed, the way a serving engine lays them out:
// a mixed batch of sequences, each with a cached context and a chunk of new tokens; a shared pool
// of KV blocks handed out as a random permutation; the context (and, by default, the new tokens)
// written into the cache with pao::reshape_and_cache, quantised to fp8 where the cache is fp8;
// NaN poison in every cache slot nothing was written to; garbage in block-table entries past a
// sequence's last block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pao/decode_case.hpp"  // ValueDistribution
#include "pao/prefix_attention.hpp"

namespace pao {

struct PrefixCaseSpec {
  std::int32_t num_heads = 1;
  std::int32_t num_kv_heads = 1;
  std::int32_t head_size = 64;
  std::int32_t block_size = 16;
  DType dtype = DType::f16;
  DType kv_cache_dtype = DType::f16;  // = dtype, or fp8_e4m3 / fp8_e5m2
  KVLayout kv_layout = KVLayout::vllm;
  /// Per sequence: cached tokens and new tokens (seq_len = context + query).
  std::vector<std::int32_t> context_lens{0};
  std::vector<std::int32_t> query_lens{1};
  /// Physical blocks in the pool; 0: the blocks the sequences need plus one spare per sequence.
  std::int32_t num_blocks = 0;
  /// Extra block-table columns past the longest sequence's need (filled with garbage).
  std::int32_t extra_table_columns = 1;
  /// Also write the new tokens' K/V into the cache (what vLLM does before attention). The kernel
  /// never reads them there; with false their slots keep the NaN poison.
  bool cache_new_tokens = true;
  std::int32_t block_m = 128, block_n = 64, context_tile = 32;
  std::int32_t max_query_len = 0;
  std::optional<float> scale;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  bool alibi = false;
  float soft_cap = 0.0f;
  std::int32_t sliding_window = 0;
  ValueDistribution distribution = ValueDistribution::uniform;
  bool poison_unused = true;
  std::uint64_t seed = 0;

  std::int32_t num_seqs() const { return static_cast<std::int32_t>(context_lens.size()); }
  std::int32_t num_tokens() const;
};

/// One line naming every field that differs between cases, the seed included.
std::string describe(const PrefixCaseSpec& spec);

struct PrefixCase {
  PrefixCaseSpec spec;
  Tensor query, key, value;  // [num_tokens, num_heads | num_kv_heads, head_size]
  Tensor key_cache, value_cache, block_tables, seq_lens, query_start_loc, alibi_slopes;
  Tensor slot_mapping;  // [num_tokens] i64: the slot of every new token

  /// Views onto this case's tensors (valid while the case lives).
  PrefixArgs args() const;
};

PrefixCase make_prefix_case(const PrefixCaseSpec& spec);

}  // namespace pao

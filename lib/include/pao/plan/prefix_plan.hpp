// The plan of the K-tiled prefix (chunked-prefill) attention kernel: the CTAs of vLLM's
// `_fwd_kernel` (vllm/attention/ops/prefix_prefill.py) and the K tiles each one walks. The CPU
// kernels execute it, the simulator times it; nobody re-derives the tiling on their own.
//
// Grid (vLLM's context_attention_fwd): (num_seqs, num_heads, ceil(max_query_len / block_m)).
// CTA (seq, head, m_tile) owns the query rows [m_tile * block_m, (m_tile + 1) * block_m) of its
// sequence's new tokens and walks
//   1. the context: tiles of `context_tile` cached tokens (vLLM's TRITON_BLOCK_SIZE = 32),
//      [0, ctx_len) read through the block table, no causal mask;
//   2. the new tokens: tiles of `block_n` tokens starting at 0, up to (m_tile + 1) * block_m, read
//      from `key` / `value`, with the causal mask on tiles that reach past the CTA's first row.
// vLLM masks only the second loop by query_len: a CTA whose rows all lie past its sequence's
// query_len (the grid is sized by the longest query) still walks the whole context and stores
// nothing. Such a CTA is `empty()`; its context tiles are listed, because the GPU spends the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pao/plan/kernel_tuning.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao {

/// Everything about a prefix launch that decides its decomposition: the shape, the tuning's tiles
/// (block_m query rows per CTA, block_n keys per new-token tile, context_tile keys per context
/// tile) and max_query_len.
struct PrefixShape : LaunchShape, KernelTuning {
  std::int32_t max_query_len = 0;  // sizes grid z (vLLM's max_input_len); 0: the longest query_len
};

enum class PrefixTileKind : std::uint8_t {
  context,     // keys from the paged cache
  new_tokens,  // keys from `key` / `value`
};

/// One K tile of a CTA. The kernel loads `width` keys (masked loads past `num_keys`).
struct PrefixTile {
  PrefixTileKind kind = PrefixTileKind::context;
  /// Context: index of the first key in the cached context. New tokens: index among the
  /// sequence's new tokens (vLLM's start_n).
  std::int32_t key_begin = 0;
  std::int32_t width = 0;     // context_tile or block_n
  std::int32_t num_keys = 0;  // keys that exist: < ctx_len (context) or < query_len (new); may be 0
  /// New tokens only: some key of the tile lies after the CTA's first query row, so the causal
  /// mask changes something (the tiles that cross the diagonal, and those past it).
  bool causal = false;

  /// Position in the sequence (context first) of the tile's first key.
  std::int32_t key_position(std::int32_t ctx_len) const {
    return kind == PrefixTileKind::context ? key_begin : ctx_len + key_begin;
  }
};

/// One CTA. Its tiles are plan.tiles[first_tile, first_tile + num_context_tiles + num_new_tiles):
/// context tiles first, then new-token tiles. All heads of a (seq, m_tile) share one tile range.
struct PrefixCta {
  std::int32_t seq = 0;
  std::int32_t head = 0;
  std::int32_t m_tile = 0;
  /// Query rows [query_begin, query_end) among the sequence's new tokens; empty when m_tile * block_m
  /// >= query_len. Row r is token `token_offset + r` of query / out.
  std::int32_t query_begin = 0;
  std::int32_t query_end = 0;
  std::int32_t token_offset = 0;  // query_start_loc[seq]
  std::int32_t ctx_len = 0;       // seq_len - query_len
  std::int32_t query_len = 0;
  std::int32_t first_tile = 0;
  std::int32_t num_context_tiles = 0;
  std::int32_t num_new_tiles = 0;
  std::int64_t context_keys = 0;  // sum of num_keys over the context tiles (= ctx_len)
  std::int64_t new_keys = 0;      // sum of num_keys over the new-token tiles

  bool empty() const { return query_end <= query_begin; }
  std::int32_t num_rows() const { return empty() ? 0 : query_end - query_begin; }
  std::int32_t num_tiles() const { return num_context_tiles + num_new_tiles; }
};

struct PrefixPlan {
  PrefixShape shape;                                // max_query_len resolved
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0;  // num_seqs, num_heads, ceil(max_query_len / block_m)
  /// Linear grid order, the order a GPU hands CTAs out: x = seq fastest, then head, then m_tile.
  std::vector<PrefixCta> ctas;
  /// The tiles of every (seq, m_tile), in walking order; CTAs point into it.
  std::vector<PrefixTile> tiles;

  std::int32_t num_queries_per_kv() const { return shape.num_queries_per_kv(); }
  std::int32_t kv_head_of(std::int32_t head) const { return shape.kv_head_of(head); }
  std::span<const PrefixTile> tiles_of(const PrefixCta& cta) const {
    return {tiles.data() + cta.first_tile, static_cast<std::size_t>(cta.num_tiles())};
  }
  /// The CTA at grid coordinates (seq, head, m_tile).
  const PrefixCta& cta_at(std::int32_t seq, std::int32_t head, std::int32_t m_tile) const {
    return ctas[(static_cast<std::size_t>(m_tile) * grid_y + head) * grid_x + seq];
  }
};

/// Plans the prefix kernel for per-sequence seq_lens (context + new) and query_lens (new).
/// Throws pao::Error on inconsistent shapes: heads not divisible, non-positive tile sizes,
/// seq_len < query_len, a query_len beyond max_query_len.
PrefixPlan plan_prefix(const PrefixShape& shape, std::span<const std::int32_t> seq_lens,
                       std::span<const std::int32_t> query_lens);

/// The bytes plan_prefix's lists take (its CTAs and their tiles), counted in doubles without
/// planning, as an upper bound: the memory checks call it before anything is built (a
/// max_query_len of 2e9 or a context_tile of 1 under a long context is gigabytes of plan).
double prefix_plan_bytes(const PrefixShape& shape, std::span<const std::int32_t> seq_lens,
                         std::span<const std::int32_t> query_lens);

}  // namespace pao

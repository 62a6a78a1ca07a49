// CTA decomposition of the prefix kernel (see pao/plan/prefix_plan.hpp).
#include "pao/plan/prefix_plan.hpp"

#include <algorithm>
#include <cmath>

#include "pao/core/error.hpp"
#include "pao/plan/launch_shape.hpp"
#include "pao/plan/partition.hpp"

namespace pao {

namespace {

// Bounds tile sizes so that tile arithmetic stays far from int32 overflow.
constexpr std::int32_t kMaxTile = 1 << 16;

void check_shape(const PrefixShape& s, std::span<const std::int32_t> seq_lens,
                 std::span<const std::int32_t> query_lens) {
  check_launch_shape(s, seq_lens.size());
  require(query_lens.size() == seq_lens.size(), "query_lens has ", query_lens.size(),
          " entries but seq_lens has ", seq_lens.size());
  require_tuning(s, KernelVariant::prefix, s.block_size);
  for (const auto& [name, tile] : {std::pair{"block_m", s.block_m}, std::pair{"block_n", s.block_n},
                                   std::pair{"context_tile", s.context_tile}})
    require(tile <= kMaxTile, name, " = ", tile, ": at most ", kMaxTile);
  require(s.max_query_len >= 0, "max_query_len = ", s.max_query_len,
          ": must be >= 0 (0 = longest query_len)");
  for (std::size_t i = 0; i < seq_lens.size(); ++i) {
    require(query_lens[i] >= 0, "query_lens[", i, "] = ", query_lens[i], ": negative length");
    require(seq_lens[i] >= query_lens[i], "seq_lens[", i, "] = ", seq_lens[i], " is less than query_len ",
            query_lens[i], " (seq_len = context + new tokens)");
    require(s.max_query_len == 0 || query_lens[i] <= s.max_query_len, "query_lens[", i, "] = ", query_lens[i],
            " exceeds max_query_len = ", s.max_query_len, " (max_query_len sizes the grid)");
  }
}

}  // namespace

PrefixPlan plan_prefix(const PrefixShape& shape, std::span<const std::int32_t> seq_lens,
                       std::span<const std::int32_t> query_lens) {
  check_shape(shape, seq_lens, query_lens);
  PrefixPlan plan;
  plan.shape = shape;
  if (plan.shape.max_query_len == 0)
    for (auto q : query_lens) plan.shape.max_query_len = std::max(plan.shape.max_query_len, q);
  const PrefixShape& s = plan.shape;
  plan.grid_x = s.num_seqs;
  plan.grid_y = s.num_heads;
  plan.grid_z = ceil_div(s.max_query_len, s.block_m);

  // Tiles of every (seq, m_tile); heads share them.
  std::vector<PrefixCta> per_seq_tile(static_cast<std::size_t>(s.num_seqs) * plan.grid_z);
  std::int32_t token_offset = 0;
  for (std::int32_t seq = 0; seq < s.num_seqs; ++seq) {
    const std::int32_t query_len = query_lens[static_cast<std::size_t>(seq)];
    const std::int32_t ctx_len = seq_lens[static_cast<std::size_t>(seq)] - query_len;
    for (std::int32_t m = 0; m < plan.grid_z; ++m) {
      PrefixCta c;
      c.seq = seq;
      c.m_tile = m;
      c.query_begin = std::min(m * s.block_m, query_len);
      c.query_end = std::min((m + 1) * s.block_m, query_len);
      c.token_offset = token_offset;
      c.ctx_len = ctx_len;
      c.query_len = query_len;
      c.first_tile = static_cast<std::int32_t>(plan.tiles.size());
      for (std::int32_t k = 0; k < ctx_len; k += s.context_tile) {
        const std::int32_t n = std::min(s.context_tile, ctx_len - k);
        plan.tiles.push_back({PrefixTileKind::context, k, s.context_tile, n, false});
        ++c.num_context_tiles;
        c.context_keys += n;
      }
      if (!c.empty()) {  // vLLM's block_mask: the new-token loop runs only for CTAs with rows
        const std::int32_t first_row = m * s.block_m;
        for (std::int32_t k = 0; k < (m + 1) * s.block_m; k += s.block_n) {
          const std::int32_t n = std::clamp(query_len - k, 0, s.block_n);
          plan.tiles.push_back({PrefixTileKind::new_tokens, k, s.block_n, n, k + s.block_n - 1 > first_row});
          ++c.num_new_tiles;
          c.new_keys += n;
        }
      }
      per_seq_tile[static_cast<std::size_t>(seq) * plan.grid_z + m] = c;
    }
    token_offset += query_len;
  }

  plan.ctas.reserve(static_cast<std::size_t>(plan.grid_x) * plan.grid_y * plan.grid_z);
  for (std::int32_t m = 0; m < plan.grid_z; ++m)
    for (std::int32_t head = 0; head < plan.grid_y; ++head)
      for (std::int32_t seq = 0; seq < plan.grid_x; ++seq) {
        PrefixCta c = per_seq_tile[static_cast<std::size_t>(seq) * plan.grid_z + m];
        c.head = head;
        plan.ctas.push_back(c);
      }
  return plan;
}

double prefix_plan_bytes(const PrefixShape& shape, std::span<const std::int32_t> seq_lens,
                         std::span<const std::int32_t> query_lens) {
  const auto up = [](double n, std::int32_t d) { return std::ceil(n / std::max(d, 1)); };
  double max_query = shape.max_query_len;
  for (const auto q : query_lens) max_query = std::max<double>(max_query, q);
  const double grid_z = up(max_query, shape.block_m);
  double tiles = 0;  // every (seq, m_tile): its context tiles and at most every new-token tile
  for (std::size_t i = 0; i < seq_lens.size(); ++i) {
    const double q = i < query_lens.size() ? query_lens[i] : 1;
    tiles += grid_z * (up(std::max(0.0, seq_lens[i] - q), shape.context_tile) + up(q, shape.block_n));
  }
  const double seqs = static_cast<double>(seq_lens.size());
  return seqs * grid_z * (std::max(shape.num_heads, 1) + 1.0) * static_cast<double>(sizeof(PrefixCta)) +
         tiles * static_cast<double>(sizeof(PrefixTile));
}

}  // namespace pao

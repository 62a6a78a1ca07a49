// Checks of a prefix launch; its grid and device tables, all taken from the plan.
#include "pao/cuda/prefix_launch.hpp"

#include <cmath>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/cuda/dispatch.hpp"
#include "status_of.hpp"

namespace pao::cuda {

Status plan_prefix_launch(const PrefixParams& p, std::span<const std::int32_t> seq_lens,
                          std::span<const std::int32_t> query_lens, std::int32_t block_m,
                          std::int32_t block_n, std::int32_t context_tile, std::int32_t max_query_len,
                          PrefixPlan& plan) {
  const KernelTuning tiles{.block_m = block_m, .block_n = block_n, .context_tile = context_tile};
  const PrefixShape s{p, tiles, max_query_len};
  return detail::status_of([&] { plan = plan_prefix(s, seq_lens, query_lens); });
}

std::size_t prefix_shared_bytes(std::int32_t head_size, std::int32_t width) {
  const auto hs = static_cast<std::size_t>(head_size), w = static_cast<std::size_t>(width);
  const auto rows = static_cast<std::size_t>(kPrefixRowsPerPass);
  return sizeof(float) * (w * (hs + 1) + rows * w + rows * (hs + 1) + 3 * rows);
}

Status make_prefix_launch(const PrefixParams& p, const PrefixPlan& plan, PrefixLaunch& launch) {
  const auto accept = []<auto...>() { return Status{}; };
  if (Status s = dispatch_dtypes(p.dtype, p.kv_cache_dtype, accept); !s.ok()) return s;
  if (Status s = dispatch_head_size(p.head_size, accept); !s.ok()) return s;
  if (p.block_size <= 0) return Status::failure_of("block_size = ", p.block_size, ": must be positive");
  if (Status st = check_attention_params(p); !st.ok()) return st;
  const PrefixShape& s = plan.shape;
  if (Status st = detail::check_same_as_plan({{"num_seqs", p.num_seqs, s.num_seqs},
                                              {"num_heads", p.num_heads, s.num_heads},
                                              {"num_kv_heads", p.num_kv_heads, s.num_kv_heads},
                                              {"head_size", p.head_size, s.head_size},
                                              {"block_size", p.block_size, s.block_size}});
      !st.ok())
    return st;
  if (Status st = detail::check_plan_grid(plan.ctas.size(), plan.grid_x, plan.grid_y, plan.grid_z); !st.ok())
    return st;
  std::int64_t tokens = 0;
  for (const PrefixCta& c : plan.ctas)
    if (c.head == 0 && c.m_tile == 0) tokens += c.query_len;
  if (tokens != p.num_tokens)
    return Status::failure_of("num_tokens = ", p.num_tokens, " but the plan's query_lens add up to ", tokens);
  if (p.num_tokens > 0)
    if (Status st =
            detail::check_pointers({{"query", p.query}, {"key", p.key}, {"value", p.value}, {"out", p.out}});
        !st.ok())
      return st;
  if (Status st =
          detail::check_grid_limits(plan.grid_y, "num_heads", plan.grid_z, "ceil(max_query_len / block_m)");
      !st.ok())
    return st;

  launch = PrefixLaunch{};
  launch.kernel.grid = {static_cast<std::uint32_t>(plan.grid_x), static_cast<std::uint32_t>(plan.grid_y),
                        static_cast<std::uint32_t>(plan.grid_z)};
  launch.kernel.block = {static_cast<std::uint32_t>(kPrefixThreads), 1, 1};
  launch.max_tile_width = s.block_n > s.context_tile ? s.block_n : s.context_tile;
  launch.kernel.dynamic_shared_bytes = prefix_shared_bytes(p.head_size, launch.max_tile_width);
  launch.ctas.reserve(plan.ctas.size());
  for (const PrefixCta& c : plan.ctas)
    launch.ctas.push_back(
        {c.query_begin, c.query_end, c.token_offset, c.ctx_len, c.first_tile, c.num_tiles()});
  launch.tiles.reserve(plan.tiles.size());
  for (const PrefixTile& t : plan.tiles)
    launch.tiles.push_back({t.kind == PrefixTileKind::context ? 0 : 1, t.key_begin, t.num_keys});
  return {};
}

}  // namespace pao::cuda

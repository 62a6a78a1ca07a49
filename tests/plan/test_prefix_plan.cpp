// The prefix plan: vLLM's grid, CTA order, each CTA's query range and K tiles, the counts the
// simulator reads, and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/plan/prefix_plan.hpp"

using namespace pao;

namespace {

PrefixShape shape(std::int32_t block_m, std::int32_t block_n, std::int32_t context_tile) {
  PrefixShape s;
  s.num_seqs = 4;
  s.num_heads = 6;
  s.num_kv_heads = 2;
  s.head_size = 64;
  s.block_size = 16;
  s.block_m = block_m;
  s.block_n = block_n;
  s.context_tile = context_tile;
  return s;
}

}  // namespace

TEST_CASE("plan: grid, CTA order and per-CTA ranges follow vLLM's _fwd_kernel") {
  const std::vector<std::int32_t> query_lens{37, 0, 1, 300};
  const std::vector<std::int32_t> seq_lens{37, 20, 46, 1324};
  for (const auto& t : std::vector<std::vector<std::int32_t>>{{128, 64, 32}, {16, 16, 16}, {64, 32, 24}}) {
    INFO("tiles ", t[0], "/", t[1], "/", t[2]);
    const PrefixPlan plan = plan_prefix(shape(t[0], t[1], t[2]), seq_lens, query_lens);
    CHECK(plan.grid_x == 4);
    CHECK(plan.grid_y == 6);
    CHECK(plan.grid_z == (300 + t[0] - 1) / t[0]);
    CHECK(plan.shape.max_query_len == 300);
    REQUIRE(plan.ctas.size() == static_cast<std::size_t>(4 * 6 * plan.grid_z));
    std::size_t i = 0;
    for (std::int32_t m = 0; m < plan.grid_z; ++m)
      for (std::int32_t h = 0; h < 6; ++h)
        for (std::int32_t s = 0; s < 4; ++s, ++i) {
          const PrefixCta& c = plan.ctas[i];
          REQUIRE(&plan.cta_at(s, h, m) == &c);
          CHECK(c.seq == s);
          CHECK(c.head == h);
          CHECK(c.m_tile == m);
          const std::int32_t ql = query_lens[static_cast<std::size_t>(s)];
          const std::int32_t ctx = seq_lens[static_cast<std::size_t>(s)] - ql;
          CHECK(c.query_len == ql);
          CHECK(c.ctx_len == ctx);
          CHECK(c.token_offset == (s == 0 ? 0 : s == 1 ? 37 : s == 2 ? 37 : 38));
          CHECK(c.empty() == (m * t[0] >= ql));
          if (!c.empty()) {
            CHECK(c.query_begin == m * t[0]);
            CHECK(c.query_end == std::min((m + 1) * t[0], ql));
          }
          // Context tiles: all of the context, even in empty CTAs (vLLM walks it there too).
          CHECK(c.num_context_tiles == (ctx + t[2] - 1) / t[2]);
          CHECK(c.context_keys == ctx);
          // New-token tiles: up to (m + 1) * block_m, only in CTAs with rows.
          const std::int32_t want_new = c.empty() ? 0 : ((m + 1) * t[0] + t[1] - 1) / t[1];
          CHECK(c.num_new_tiles == want_new);
          CHECK(c.new_keys == (c.empty() ? 0 : std::min((m + 1) * t[0], ql)));
          const auto tiles = plan.tiles_of(c);
          REQUIRE(tiles.size() == static_cast<std::size_t>(c.num_tiles()));
          for (std::int32_t k = 0; k < c.num_tiles(); ++k) {
            const PrefixTile& tile = tiles[static_cast<std::size_t>(k)];
            if (k < c.num_context_tiles) {
              CHECK(tile.kind == PrefixTileKind::context);
              CHECK(tile.key_begin == k * t[2]);
              CHECK(tile.width == t[2]);
              CHECK(tile.num_keys == std::min(t[2], ctx - k * t[2]));
              CHECK(!tile.causal);
              CHECK(tile.key_position(ctx) == k * t[2]);
            } else {
              const std::int32_t n = k - c.num_context_tiles;
              CHECK(tile.kind == PrefixTileKind::new_tokens);
              CHECK(tile.key_begin == n * t[1]);
              CHECK(tile.width == t[1]);
              CHECK(tile.num_keys == std::clamp(ql - n * t[1], 0, t[1]));
              CHECK(tile.causal == (n * t[1] + t[1] - 1 > m * t[0]));
              CHECK(tile.key_position(ctx) == ctx + n * t[1]);
            }
          }
        }
  }
}

TEST_CASE("plan: vLLM's defaults on a 2048 + 512 chunk") {
  PrefixShape s = shape(128, 64, 32);
  s.num_seqs = 1;
  const std::vector<std::int32_t> seq_lens{2560}, query_lens{512};
  const PrefixPlan plan = plan_prefix(s, seq_lens, query_lens);
  REQUIRE(plan.grid_z == 4);
  const PrefixCta& last = plan.cta_at(0, 5, 3);
  CHECK(last.num_context_tiles == 64);
  CHECK(last.num_new_tiles == 8);
  CHECK(last.query_begin == 384);
  CHECK(last.query_end == 512);
  // Rows 384..511: the tiles at 384 and 448 cross the diagonal; the one at 320 ends at 383.
  const auto tiles = plan.tiles_of(last);
  CHECK(!tiles[64 + 5].causal);
  CHECK(tiles[64 + 6].causal);
  CHECK(tiles[64 + 7].causal);
  // Heads of one (seq, m_tile) share their tile range.
  CHECK(plan.cta_at(0, 0, 3).first_tile == last.first_tile);
}

TEST_CASE("plan: a larger max_query_len adds empty CTAs that still walk the context") {
  PrefixShape s = shape(16, 16, 16);
  s.num_seqs = 2;
  s.max_query_len = 100;
  const std::vector<std::int32_t> seq_lens{40, 5}, query_lens{8, 5};
  const PrefixPlan plan = plan_prefix(s, seq_lens, query_lens);
  CHECK(plan.grid_z == 7);
  const PrefixCta& c = plan.cta_at(0, 0, 6);
  CHECK(c.empty());
  CHECK(c.num_rows() == 0);
  CHECK(c.num_context_tiles == 2);
  CHECK(c.num_new_tiles == 0);
  CHECK(plan.cta_at(1, 0, 0).num_context_tiles == 0);  // no context
}

TEST_CASE("plan: prefix_plan_bytes bounds the plan's lists from above, without planning") {
  // Against plans that are built: an upper bound, within a small factor (it counts every
  // new-token tile of every row tile, and a grid row of CTAs per head besides the shared one).
  for (const auto& [bm, bn, ct, mq] :
       {std::tuple{16, 16, 16, 0}, {16, 16, 16, 100}, {64, 32, 1, 0}, {128, 64, 32, 0}}) {
    PrefixShape s = shape(bm, bn, ct);
    s.num_seqs = 3;
    s.max_query_len = mq;
    const std::vector<std::int32_t> seq_lens{400, 5, 130}, query_lens{8, 5, 64};
    const PrefixPlan plan = plan_prefix(s, seq_lens, query_lens);
    const double held =
        static_cast<double>(plan.ctas.size() * sizeof(PrefixCta) + plan.tiles.size() * sizeof(PrefixTile));
    const double bound = prefix_plan_bytes(s, seq_lens, query_lens);
    CAPTURE(bm);
    CAPTURE(ct);
    CAPTURE(mq);
    CHECK(bound >= held);
    CHECK(bound <= 4 * held);
  }
  // Shapes no plan could hold are counted in doubles: a max_query_len of 2e9, a context_tile of 1
  // under 2e9 tokens of context.
  PrefixShape huge = shape(128, 64, 32);
  huge.max_query_len = 2000000000;
  const std::vector<std::int32_t> one_len{20}, one_query{8};
  CHECK(prefix_plan_bytes(huge, one_len, one_query) > 1e9);
  PrefixShape fine = shape(128, 64, 1);
  const std::vector<std::int32_t> long_len{2000000000}, long_query{1000};
  CHECK(prefix_plan_bytes(fine, long_len, long_query) > 1e10);
}

TEST_CASE("plan: errors name the rule") {
  const std::vector<std::int32_t> seq_lens{10, 10}, query_lens{4, 4};
  auto throws_with = [&](PrefixShape s, std::vector<std::int32_t> sl, std::vector<std::int32_t> ql,
                         const char* what) {
    CHECK_THROWS_WITH_AS(plan_prefix(s, sl, ql), doctest::Contains(what), Error);
  };
  PrefixShape s = shape(16, 16, 16);
  s.num_seqs = 2;
  PrefixShape bad = s;
  bad.num_kv_heads = 4;
  throws_with(bad, seq_lens, query_lens, "num_heads = 6 is not a multiple of num_kv_heads = 4");
  bad = s;
  bad.block_m = 0;
  throws_with(bad, seq_lens, query_lens, "block_m = 0: must be positive");
  bad = s;
  bad.block_n = -1;
  throws_with(bad, seq_lens, query_lens, "block_n = -1: must be positive");
  bad = s;
  bad.context_tile = 0;
  throws_with(bad, seq_lens, query_lens, "context_tile = 0: must be positive");
  bad = s;
  bad.max_query_len = 3;
  throws_with(bad, seq_lens, query_lens, "query_lens[0] = 4 exceeds max_query_len = 3");
  throws_with(s, {10, 3}, query_lens, "seq_lens[1] = 3 is less than query_len 4");
  throws_with(s, {10}, {4}, "seq_lens has 1 entries but num_seqs = 2");
  throws_with(s, seq_lens, {4}, "query_lens has 1 entries but seq_lens has 2");
  throws_with(s, seq_lens, {4, -1}, "query_lens[1] = -1: negative length");
}

// Host side of a prefix (chunked-prefill) launch, in plain C++: the plan's CTAs and K tiles in the
// compact form the kernel reads from device memory (it executes the plan; it does not re-derive
// the tiling), the checks of PrefixParams against the plan, and the visibility rules the kernel
// uses (PAO_HD, shared with the CPU tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pao/core/hd.hpp"
#include "pao/cuda/kernel_launch.hpp"
#include "pao/cuda/prefix_params.hpp"
#include "pao/cuda/status.hpp"
#include "pao/plan/prefix_plan.hpp"

namespace pao::cuda {

/// The prefix kernel's CTA: 128 threads walking the CTA's query rows 32 at a time (each pass walks
/// every tile; rows are independent, so the pass size changes no bit).
inline constexpr std::int32_t kPrefixThreads = 128;
inline constexpr std::int32_t kPrefixRowsPerPass = 32;

/// plan.ctas[i] as the kernel reads it (linear grid order: x = seq, y = head, z = m tile).
struct PrefixDeviceCta {
  std::int32_t query_begin = 0, query_end = 0;  // rows among the sequence's new tokens
  std::int32_t token_offset = 0;                // query_start_loc[seq]
  std::int32_t ctx_len = 0;
  std::int32_t first_tile = 0, num_tiles = 0;  // into the tile array
};

/// plan.tiles[i]: keys [key_begin, key_begin + num_keys) of the context (kind 0) or of the new
/// tokens (kind 1).
struct PrefixDeviceTile {
  std::int32_t kind = 0;
  std::int32_t key_begin = 0;
  std::int32_t num_keys = 0;
};

struct PrefixLaunch {
  KernelLaunch kernel;              // grid (num_seqs, num_heads, m tiles), 128 threads
  std::int32_t max_tile_width = 0;  // max(block_n, context_tile): the K/V tile buffer
  std::vector<PrefixDeviceCta> ctas;
  std::vector<PrefixDeviceTile> tiles;
};

/// plan_prefix for these params; Status instead of exceptions.
Status plan_prefix_launch(const PrefixParams& params, std::span<const std::int32_t> seq_lens,
                          std::span<const std::int32_t> query_lens, std::int32_t block_m,
                          std::int32_t block_n, std::int32_t context_tile, std::int32_t max_query_len,
                          PrefixPlan& plan);

/// Checks params against the plan and builds the launch (grid, shared memory, device tables).
Status make_prefix_launch(const PrefixParams& params, const PrefixPlan& plan, PrefixLaunch& launch);

/// Dynamic shared memory of the prefix kernel: the K/V tile [width][head_size + 1], the logits of a
/// pass [32][width], its queries [32][head_size + 1] and three floats per row.
std::size_t prefix_shared_bytes(std::int32_t head_size, std::int32_t max_tile_width);

}  // namespace pao::cuda

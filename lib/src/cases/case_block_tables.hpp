// The block tables of generated cases (make_decode_case, make_prefix_case): each sequence's used
// columns take blocks of a random permutation of the pool, so tables are non-contiguous; the
// columns past a sequence's last block hold garbage a correct kernel never reads.
#pragma once

#include <cstdint>
#include <vector>

#include "pao/core/random.hpp"

namespace pao::detail {

/// Fills `table` ([used_blocks.size()][columns], row-major) from a pool of `num_blocks` blocks.
/// Garbage past a sequence's last used column, by column: even, an out-of-range id (drawn);
/// 3 mod 4, when the pool has blocks no sequence uses, the id of such a block (its slots hold
/// the case's poison); otherwise -1. Only the out-of-range ids draw, so the numbers drawn after
/// the tables do not depend on the mix.
void fill_block_tables(std::int32_t* table, std::int32_t columns,
                       const std::vector<std::int32_t>& used_blocks, std::int32_t num_blocks, Rng& rng);

}  // namespace pao::detail

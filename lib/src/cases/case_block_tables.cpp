#include "cases/case_block_tables.hpp"

#include <numeric>

namespace pao::detail {

void fill_block_tables(std::int32_t* table, std::int32_t columns,
                       const std::vector<std::int32_t>& used_blocks, std::int32_t num_blocks, Rng& rng) {
  std::vector<std::int32_t> pool(static_cast<std::size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  for (std::size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[rng.below(i)]);
  const std::int32_t needed = std::accumulate(used_blocks.begin(), used_blocks.end(), 0);
  const std::int32_t spare = num_blocks - needed;  // pool[needed, num_blocks): no sequence's
  std::size_t next = 0;
  for (std::size_t s = 0; s < used_blocks.size(); ++s)
    for (std::int32_t b = 0; b < columns; ++b) {
      const std::int32_t garbage = b % 2 == 0 ? num_blocks + 1000 + static_cast<std::int32_t>(rng.below(1000))
                                   : b % 4 == 3 && spare > 0
                                       ? pool[static_cast<std::size_t>(needed) + (s + b) % spare]
                                       : -1;
      table[s * static_cast<std::size_t>(columns) + b] = b < used_blocks[s] ? pool[next++] : garbage;
    }
}

}  // namespace pao::detail

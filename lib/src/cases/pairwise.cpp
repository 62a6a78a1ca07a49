// Grid products and the greedy pairwise cover (pao/cases/pairwise.hpp).
#include "pao/cases/pairwise.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "pao/core/error.hpp"

namespace pao::cases {

std::vector<GridRow> grid_product(const std::vector<std::size_t>& axis_sizes,
                                  const std::function<bool(const GridRow&)>& allowed, std::size_t max_rows) {
  std::size_t total = 1;
  for (std::size_t n : axis_sizes) {
    require(n > 0, "suite grid: an axis has no values");
    require(total <= max_rows / n, "suite grid: the full product exceeds ", max_rows, " cases");
    total *= n;
  }
  std::vector<GridRow> rows;
  GridRow row(axis_sizes.size(), 0);
  for (std::size_t k = 0; k < total; ++k) {
    if (!allowed || allowed(row)) rows.push_back(row);
    // Odometer, last axis fastest.
    for (std::size_t a = axis_sizes.size(); a-- > 0;) {
      if (++row[a] < axis_sizes[a]) break;
      row[a] = 0;
    }
  }
  return rows;
}

std::vector<GridRow> pairwise_cover(const std::vector<std::size_t>& axis_sizes,
                                    const std::vector<GridRow>& rows) {
  const std::size_t n = axis_sizes.size();
  if (n < 2) return rows;
  // Pair (axis i, value a, axis j, value b), i < j, as one index into a flat bitmap.
  std::vector<std::size_t> pair_base;  // for each (i, j), the offset of its sizes[i] x sizes[j] block
  std::size_t num_pairs = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      pair_base.push_back(num_pairs);
      num_pairs += axis_sizes[i] * axis_sizes[j];
    }
  auto pairs_of = [&](const GridRow& r, std::vector<std::size_t>& out) {
    out.clear();
    std::size_t p = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j, ++p) out.push_back(pair_base[p] + r[i] * axis_sizes[j] + r[j]);
  };

  std::vector<std::uint8_t> uncovered(num_pairs, 0);
  std::vector<std::size_t> scratch;
  for (const auto& r : rows) {
    pairs_of(r, scratch);
    for (std::size_t q : scratch) uncovered[q] = 1;
  }
  std::size_t remaining = static_cast<std::size_t>(std::count(uncovered.begin(), uncovered.end(), 1));

  std::vector<bool> taken(rows.size(), false);
  while (remaining > 0) {
    std::size_t best = rows.size(), best_gain = 0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (taken[k]) continue;
      pairs_of(rows[k], scratch);
      std::size_t gain = 0;
      for (std::size_t q : scratch) gain += uncovered[q];
      if (gain > best_gain) best_gain = gain, best = k;
    }
    taken[best] = true;  // best_gain > 0: every uncovered pair occurs in some row
    pairs_of(rows[best], scratch);
    for (std::size_t q : scratch) {
      remaining -= uncovered[q];
      uncovered[q] = 0;
    }
  }
  std::vector<GridRow> cover;
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (taken[k]) cover.push_back(rows[k]);
  return cover;
}

}  // namespace pao::cases

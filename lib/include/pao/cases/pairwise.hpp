// Pairwise (all-pairs) covering of a parameter grid: a small set of rows such that every pair of
// values of any two axes that the full product allows appears in at least one row.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace pao::cases {

/// One row: a value index per axis.
using GridRow = std::vector<std::size_t>;

/// Every row of the product of axes of the given sizes, first axis slowest, that `allowed`
/// accepts (null: all). Throws pao::Error if the product exceeds `max_rows`.
std::vector<GridRow> grid_product(const std::vector<std::size_t>& axis_sizes,
                                  const std::function<bool(const GridRow&)>& allowed,
                                  std::size_t max_rows = 2'000'000);

/// A deterministic greedy pairwise cover of `rows` (the allowed product): repeatedly take the
/// row that covers the most still-uncovered pairs (the earliest such row on ties) until every pair
/// occurring in `rows` is covered. Returned in the order of `rows`. With fewer than two axes the
/// cover is `rows` itself.
std::vector<GridRow> pairwise_cover(const std::vector<std::size_t>& axis_sizes,
                                    const std::vector<GridRow>& rows);

}  // namespace pao::cases

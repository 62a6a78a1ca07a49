// Name suggestions (pao/core/suggest.hpp).
#include "pao/core/suggest.hpp"

#include <algorithm>

namespace pao {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view wrong, const std::vector<std::string>& names,
                         std::size_t max_distance) {
  std::string best;
  std::size_t best_distance = max_distance + 1;
  for (const auto& n : names) {
    const std::size_t d = edit_distance(wrong, n);
    if (d < best_distance) best_distance = d, best = n;
  }
  if (!best.empty()) return best;
  for (const auto& n : names) {
    const bool related =
        n.size() > 1 && (n.find(wrong) != std::string::npos || wrong.find(n) != std::string_view::npos);
    if (related && n.size() > best.size()) best = n;
  }
  return best;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& names) {
  const std::string n = closest_name(wrong, names);
  return n.empty() ? "" : " (did you mean " + n + "?)";
}

}  // namespace pao

// "Did you mean ...?" for names a user mistyped: case fields, device names, --policy tensors. One
// edit distance and one rule for what counts as close, used by every error that suggests a name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pao {

/// Levenshtein distance: insertions, deletions and substitutions of one character.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The name of `names` closest to `wrong`: at most `max_distance` edits away, or else one that
/// contains it or is contained in it (the longest such); "" when none is close.
std::string closest_name(std::string_view wrong, const std::vector<std::string>& names,
                         std::size_t max_distance = 3);

/// " (did you mean NAME?)", or "" when no name is close.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& names);

}  // namespace pao

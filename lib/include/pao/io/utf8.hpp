// Strict UTF-8 validation (no overlong forms, no surrogates, nothing above U+10FFFF), used on
// file headers before they are parsed and on names and metadata before they are written.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace pao {

/// The byte offset of the first invalid sequence, or nullopt if `text` is valid UTF-8.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

}  // namespace pao

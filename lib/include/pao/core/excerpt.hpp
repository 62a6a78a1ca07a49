// How an error message quotes an input value: whole when short, else its start and its length, so
// that a hostile value (a 100000-character id, a 2M-entry list) makes one short line, never
// megabytes of stderr. JSON values: json_excerpt() in pao/io/json_read.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pao {

/// How much of an input value an error message quotes.
inline constexpr std::size_t kExcerptChars = 200;

/// `text` itself when it has at most `max_chars` bytes, else its start and how long it is:
/// "[[[[[[... (100000 characters)". Never cuts a UTF-8 sequence.
std::string excerpt(std::string_view text, std::size_t max_chars = kExcerptChars);

}  // namespace pao

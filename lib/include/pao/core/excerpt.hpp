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

/// Messages up to this long are printed as they are.
inline constexpr std::size_t kShortMessageChars = 1000;

/// An error message as the tools print it: itself when at most kShortMessageChars long, else with
/// every word (a run without spaces) longer than `max_chars` cut to its excerpt. The last guard,
/// where every tool prints an error: a message that quoted a whole input (a 100000-character
/// option value) still makes a short line.
std::string shortened_message(std::string_view message, std::size_t max_chars = kExcerptChars);

}  // namespace pao

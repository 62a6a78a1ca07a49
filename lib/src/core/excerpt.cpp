// Excerpts of input values for error messages (pao/core/excerpt.hpp).
#include "pao/core/excerpt.hpp"

#include <algorithm>

namespace pao {

std::string excerpt(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  std::size_t keep = max_chars > 30 ? max_chars - 30 : max_chars;  // room for "... (N characters)"
  // Back up to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return std::string(text.substr(0, keep)) + "... (" + std::to_string(text.size()) + " characters)";
}

std::string shortened_message(std::string_view message, std::size_t max_chars) {
  if (message.size() <= kShortMessageChars) return std::string(message);
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    const std::size_t word_end = std::min(message.find_first_of(" \n\t", i), message.size());
    out += excerpt(message.substr(i, word_end - i), max_chars);
    if (word_end < message.size()) out += message[word_end];
    i = word_end + 1;
  }
  return out;
}

}  // namespace pao

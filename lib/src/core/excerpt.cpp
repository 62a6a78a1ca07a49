// Excerpts of input values for error messages (pao/core/excerpt.hpp).
#include "pao/core/excerpt.hpp"

#include <algorithm>

namespace pao {

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// `text` with its control characters written as escapes ("\\n", "\\x00"): an excerpt stays on one
/// line and shows what was there.
std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_control(c)) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t max_chars) {
  const bool plain = std::none_of(text.begin(), text.end(),
                                  [](char c) { return is_control(static_cast<unsigned char>(c)); });
  if (plain && text.size() <= max_chars) return std::string(text);
  // Escaped, a byte takes at most 4 characters: the start of the text is all an excerpt needs.
  const std::string shown = plain ? std::string(text.substr(0, max_chars + 1))
                                  : escaped(text.substr(0, std::min(text.size(), max_chars + 1)));
  if (text.size() <= max_chars && shown.size() <= max_chars) return shown;
  std::size_t keep = max_chars > 30 ? max_chars - 30 : max_chars;  // room for "... (N characters)"
  keep = std::min(keep, shown.size());
  // Back up to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (keep > 0 && keep < shown.size() && (static_cast<unsigned char>(shown[keep]) & 0xC0) == 0x80) --keep;
  return shown.substr(0, keep) + "... (" + std::to_string(text.size()) + " characters)";
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

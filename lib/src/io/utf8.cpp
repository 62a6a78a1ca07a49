// Strict UTF-8 validation (RFC 3629).
#include "pao/io/utf8.hpp"

#include <cstdint>

namespace pao {

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t lead = s[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    std::uint8_t second_min = 0x80, second_max = 0xBF;  // the second byte's range excludes overlong
    if (lead >= 0xC2 && lead <= 0xDF) {                 // forms, surrogates and code points > U+10FFFF
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
    } else {
      return i;
    }
    if (n - i < length) return i;
    if (s[i + 1] < second_min || s[i + 1] > second_max) return i;
    for (std::size_t k = 2; k < length; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    i += length;
  }
  return std::nullopt;
}

}  // namespace pao

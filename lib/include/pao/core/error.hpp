// pao::Error: the one exception type for bad input. Messages name the tensor, the index
// and the rule that was broken, e.g.
//   "block_tables[2][5] = 913: block id out of range [0, 512) of key_cache".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace pao {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Builds a message from streamable parts: fail("query", " has ", n, " heads").
template <typename... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  throw Error(os.str());
}

template <typename... Parts>
void require(bool condition, Parts&&... parts) {
  if (!condition) fail(std::forward<Parts>(parts)...);
}

}  // namespace pao

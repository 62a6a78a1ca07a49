// Overflow-checked tensor sizes.
#include "pao/io/checked_size.hpp"

#include <limits>

namespace pao {

std::optional<std::uint64_t> checked_tensor_bytes(const Shape& shape, DType dtype) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // `span` is the product of max(dim, 1): it bounds every stride, also when some dim is 0.
  std::int64_t span = static_cast<std::int64_t>(dtype_size(dtype));
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (span > kMax / d) return std::nullopt;
    span *= d;
  }
  return empty ? 0 : static_cast<std::uint64_t>(span);
}

}  // namespace pao

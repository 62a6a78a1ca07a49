// errno_text (pao/core/errno_text.hpp).
#include "pao/core/errno_text.hpp"

#include <cstring>

namespace pao {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace pao

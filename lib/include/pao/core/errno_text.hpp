// The one place a system error number becomes text.
#pragma once

#include <string>

namespace pao {

/// What the system says about `err` ("No such file or directory"). Read errno into a variable right
/// after the call that set it, then pass it here: read in the same argument list as the call, it
/// may be read before the call runs (the order of evaluation of arguments is unspecified).
std::string errno_text(int err);

}  // namespace pao

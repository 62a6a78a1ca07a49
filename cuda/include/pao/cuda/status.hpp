// The result of a CUDA launcher or of a host-side check in cuda/: success, or one message that
// names the parameter, its value and the rule broken. Launchers return it; nothing in cuda/
// calls exit() or throws across the API.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace pao::cuda {

class Status {
 public:
  Status() = default;  // success
  static Status failure(std::string message) {
    Status s;
    s.message_ = message.empty() ? std::string("unspecified error") : std::move(message);
    return s;
  }

  /// failure() of the parts written one after another: Status::failure_of("x = ", 3, ": bad").
  template <typename... Parts>
  static Status failure_of(Parts&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return failure(os.str());
  }

  bool ok() const { return message_.empty(); }
  /// Empty on success.
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace pao::cuda

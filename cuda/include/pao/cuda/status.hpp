// The result of a CUDA launcher or of a host-side check in cuda/: success, or one message that
// names the parameter, its value and the rule broken. Launchers return it; nothing in cuda/
// calls exit() or throws across the API.
#pragma once

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

  bool ok() const { return message_.empty(); }
  /// Empty on success.
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace pao::cuda

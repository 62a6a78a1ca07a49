// The lib's checks and plans throw pao::Error; the cuda/ API returns a Status instead (nothing
// throws across it). status_of turns the one into the other.
#pragma once

#include "pao/core/error.hpp"
#include "pao/cuda/status.hpp"

namespace pao::cuda::detail {

/// Runs f(): success, or a failure with the message of the pao::Error it threw.
template <typename F>
Status status_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return Status::failure(e.what());
  }
  return {};
}

}  // namespace pao::cuda::detail

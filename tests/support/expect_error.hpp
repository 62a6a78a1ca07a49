// The check of the input-error tests: a call throws pao::Error whose message contains a
// fragment (the tensor, the index, the rule).
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "pao/core/error.hpp"

namespace pao::test {

/// CHECKs that `call()` throws pao::Error with `fragment` in its message.
template <typename Call>
void expect_error_from(Call&& call, const std::string& fragment) {
  INFO("expecting: ", fragment);
  CHECK_THROWS_WITH_AS(call(), doctest::Contains(fragment.c_str()), Error);
}

}  // namespace pao::test

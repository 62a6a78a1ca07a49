// libFuzzer target for the case and suite JSON readers (pao golden's inputs). Any input must be
// accepted or rejected with pao::Error; an accepted case must survive case_to_json -> parse_case
// unchanged, and so must every case a suite expands to.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pao/cases/case.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();  // libFuzzer reports the input that got here
}

void round_trip(const pao::cases::Case& c) {
  const std::string canonical = pao::cases::case_to_json(c);  // must not throw
  const pao::cases::Case again = pao::cases::parse_case(canonical, "fuzz-round-trip");
  check(pao::cases::case_to_json(again) == canonical);
  check(!pao::cases::describe(c).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    round_trip(pao::cases::parse_case(text, "fuzz-input"));
  } catch (const pao::Error&) {
  }
  try {
    for (const auto& c : pao::cases::expand_suite_text(text, "fuzz-input", /*full=*/false)) round_trip(c);
  } catch (const pao::Error&) {
  }
  return 0;
}

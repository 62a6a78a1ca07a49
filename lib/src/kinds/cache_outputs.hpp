// The written caches as golden outputs, declared once for the kinds that write them
// (reshape_and_cache and write_and_attend; private to kinds/): the caches and an integer cache's
// scales and zero points, judged bit for bit, under their own names in a vendor's file.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "pao/kinds/golden_tensor_lists.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds::detail {

inline constexpr auto kCacheOutputNames = names_of(kWrittenStepCaches);
static_assert(names_of(kReshapeWrites) == kCacheOutputNames);

inline constexpr std::array<OutputSpec, kCacheOutputNames.size()> kCacheOutputs = [] {
  std::array<OutputSpec, kCacheOutputNames.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = {kCacheOutputNames[i], {}, RowLayout::cache, OutputSpec::Judged::cache, ""};
  return out;
}();

}  // namespace pao::kinds::detail

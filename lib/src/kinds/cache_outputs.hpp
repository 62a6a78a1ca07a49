// The written caches as golden outputs, declared once for the kinds that write them
// (reshape_and_cache and write_and_attend; private to kinds/): the caches and an integer cache's
// scales and zero points, judged bit for bit, under their own names in a vendor's file.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds::detail {

inline constexpr std::array<std::string_view, 6> kCacheOutputNames = {
    "key_cache",         "value_cache",           "key_cache_scale", "key_cache_zero_point",
    "value_cache_scale", "value_cache_zero_point"};

inline constexpr std::array<OutputSpec, kCacheOutputNames.size()> kCacheOutputs = [] {
  std::array<OutputSpec, kCacheOutputNames.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = {kCacheOutputNames[i], {}, RowLayout::cache, OutputSpec::Judged::cache, ""};
  return out;
}();

/// a then b: a kind's own rows followed by shared ones.
template <typename T, std::size_t N, std::size_t M>
constexpr std::array<T, N + M> concat(const std::array<T, N>& a, const std::array<T, M>& b) {
  std::array<T, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

}  // namespace pao::kinds::detail

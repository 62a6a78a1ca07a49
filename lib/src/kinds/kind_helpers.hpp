// What the kind descriptors share while they build goldens and metadata (private to kinds/).
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kinds/golden_tensor_lists.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds::detail {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

inline bool wanted(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// The tensors of `list` (pao/kinds/golden_tensor_lists.hpp) moved out of the seeded case `c`
/// under their names: those a golden of case `spec` holds (golden_tensor_applies), in order.
template <typename C, std::size_t N>
void move_tensors(const cases::Case& spec, C& c, const std::array<CaseTensor<C>, N>& list,
                  NamedTensors& out) {
  for (const CaseTensor<C>& in : list)
    if (golden_tensor_applies(spec, in.name)) out.emplace_back(in.name, std::move(in.of(c)));
}

/// A golden of a kind with a typed case: the seeded case's inputs of `list` (move_tensors), then
/// the outputs computed from them (computed before the inputs leave `seeded`).
template <typename C, std::size_t N>
void add_golden_tensors(const cases::Case& spec, C& seeded, const std::array<CaseTensor<C>, N>& list,
                        NamedTensors computed, NamedTensors& out) {
  move_tensors(spec, seeded, list, out);
  for (auto& named : computed) out.push_back(std::move(named));
}

/// The parts streamed into one string: a rule's reason with the case's values.
template <typename... Parts>
std::string text(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// "1,17,300": a list in golden metadata.
inline std::string join(const std::vector<std::int32_t>& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

/// insert_or_assign of a std::string: GCC 12 -O3 warns (-Wrestrict, a false positive) on
/// std::string::operator=(const char*).
inline void put(SafetensorsMetadata& m, const char* key, std::string value) {
  m.insert_or_assign(key, std::move(value));
}

}  // namespace pao::kinds::detail

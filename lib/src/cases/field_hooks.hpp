// The hooks most rows of the case schema share, on a member of Case (case_schema.cpp): read,
// write, compare and tag it by the row's name, default and tag. Private to cases/.
#pragma once

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "cases/case_id_text.hpp"
#include "cases/field_input.hpp"
#include "pao/cases/case_schema.hpp"

namespace pao::cases::field_hooks {

using nlohmann::json;

template <auto M>
using MemberType = std::remove_cvref_t<decltype(std::declval<Case&>().*M)>;

template <auto M>
bool same(const Case& a, const Case& b) {
  return a.*M == b.*M;
}

template <auto M>
MemberType<M> fallback_of(const CaseField& self) {
  return static_cast<MemberType<M>>(self.fallback);
}

template <auto M>
void read_int(const CaseField& self, const FieldInput& in, Case& c) {
  c.*M = in.i32(self.name, self.lo, static_cast<std::int32_t>(self.fallback));
}

template <auto M>
void read_bool(const CaseField& self, const FieldInput& in, Case& c) {
  c.*M = in.boolean(self.name, self.fallback != 0);
}

template <auto M>
void write_value(const CaseField& self, const Case& c, json& out) {
  out[std::string(self.name)] = c.*M;
}

/// Fields added after golden format 1: written only when they differ from the default.
template <auto M>
void write_unless_default(const CaseField& self, const Case& c, json& out) {
  if (c.*M != fallback_of<M>(self)) out[std::string(self.name)] = c.*M;
}

/// "-<tag><value>" (a boolean: "-<tag>") when the field is not its default.
template <auto M>
void tag_unless_default(const CaseField& self, const Case& c, IdBuilder& id) {
  if (c.*M == fallback_of<M>(self)) return;
  if constexpr (std::is_same_v<MemberType<M>, bool>)
    id.add(self.tag);
  else
    id.add(self.tag, std::to_string(c.*M));
}

template <auto M>
void write_if_given(const CaseField& self, const Case& c, json& out) {
  if (!(c.*M).empty()) out[std::string(self.name)] = c.*M;
}

template <auto M>
void tag_scales(const CaseField& self, const Case& c, IdBuilder& id) {
  if (!(c.*M).empty()) id.add(self.tag, id_text::scales(c.*M));
}

template <auto M>
void tag_scale(const CaseField& self, const Case& c, IdBuilder& id) {
  if (c.*M != 1.0) id.add(self.tag, id_text::number(c.*M));
}

/// One text for a describe hook: ", <label> <value>" when the member is not its default.
template <auto M>
void say_unless_default(const CaseField& self, const Case& c, std::string& out) {
  if (c.*M == fallback_of<M>(self)) return;
  std::ostringstream os;
  os << ", " << self.tag;
  if constexpr (!std::is_same_v<MemberType<M>, bool>) os << ' ' << c.*M;
  out += os.str();
}

}  // namespace pao::cases::field_hooks

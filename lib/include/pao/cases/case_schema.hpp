// The case schema: every field a case JSON may hold, declared once as a row of one table
// (case_schema.cpp) — its name, type, which kinds take it, its default, the tag it adds to a
// derived id, its doc line, and the hooks that read, write, compare, name and describe it. The
// parser, the writer, operator==, derive_case_id, describe, override_field, the Python binding's
// `case_fields` and docs/golden.md's field table (`pao golden --list-fields`) all loop over it,
// so a new field is its member in case.hpp and its row here (docs/architecture.md).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "pao/cases/case.hpp"

namespace pao::kinds {
class KernelKind;
}

namespace pao::cases {

class FieldInput;  // the JSON object a case is parsed from (private to cases/)

/// The JSON type of a field's value.
enum class FieldType : std::uint8_t { integer, number, boolean, text, lengths, numbers, object };
std::string_view to_string(FieldType t);

/// Which kinds take a field.
enum class FieldScope : std::uint8_t {
  every_kind,     // all of them
  attention,      // the kinds that attend (KindTraits::attends)
  new_tokens,     // the kinds with new tokens per sequence (KindTraits::new_tokens)
  kind_declared,  // the kinds whose KindTraits::fields list it
};

/// What a field is about (the sections of docs/golden.md's table; the Python binding's
/// default_tuning is the `tuning` group).
enum class FieldGroup : std::uint8_t { identity, shape, dtypes, attention, tuning, pool, lengths };
std::string_view to_string(FieldGroup g);

/// The id being derived (derive_case_id), with how the case gave its lengths.
struct IdBuilder {
  std::string id;
  bool seq_lens_given = true;
  bool max_seq_len_given = false;
  /// Appends "-<tag><value>".
  void add(std::string_view tag, std::string_view value = {});
};

struct CaseField {
  std::string_view name;
  FieldType type;
  FieldScope scope;
  FieldGroup group;
  /// Integer and boolean fields: the default (vLLM's) and the least value allowed.
  std::int64_t fallback = 0;
  std::int64_t lo = 0;
  /// The default as the docs say it when it is not `fallback` ("required", "1/√head_size").
  std::string_view default_text = {};
  /// The tag it adds to a derived id ("p": "-p256"); "" when it adds none of its own.
  std::string_view tag = {};
  /// The docs' words for its part of an id when `tag` does not say it ("with `block_m`").
  std::string_view id_doc = {};
  std::string_view doc = {};
  /// The values it takes, from the tables that define them (the dtypes, the cache formats), for
  /// the docs; nullptr when `doc` says them.
  std::string (*choices)() = nullptr;

  /// Reads the field, or its default, into `c`, and checks its rules against the fields before
  /// it in the table. nullptr: read by the parser itself (kernel first; the lengths together once
  /// every other field is known, since they may be drawn from the seed; the id last).
  void (*read)(const CaseField& self, const FieldInput& in, Case& c) = nullptr;
  /// Writes it into the case's JSON object (fields added after golden format 1: only when not
  /// their default, so that older goldens' metadata does not change).
  void (*write)(const CaseField& self, const Case& c, nlohmann::json& out) = nullptr;
  bool (*equal)(const Case& a, const Case& b) = nullptr;
  /// Adds its tag to a derived id when it is not the default (nullptr: none).
  void (*id)(const CaseField& self, const Case& c, IdBuilder& id) = nullptr;
  /// Its words in describe(", alibi"), after the kind's (nullptr: none).
  void (*describe)(const CaseField& self, const Case& c, std::string& out) = nullptr;
};

/// Every field, in the order they are read and tag a derived id.
std::span<const CaseField> case_fields();
/// The field named `name`, or nullptr.
const CaseField* find_case_field(std::string_view name);
/// Whether a case of `kind` takes `field`.
bool kind_takes(const kinds::KernelKind& kind, const CaseField& field);
/// "decode", "prefix and write_and_attend", "attention kinds", "every kind": who takes `field`.
std::string field_takers(const CaseField& field);
/// docs/golden.md's table of case fields (`pao golden --list-fields`).
std::string case_fields_markdown();

/// A typed value for override_field.
using FieldValue = std::variant<std::int64_t, double, bool, std::string>;

/// A copy of `c` with `field` set to `value`, checked as a case file would be (`pao golden
/// --partition-size`, `--vllm-faithful`); a value of the wrong type for the field is an error. A
/// derived id (derive_case_id) is derived again from the new parameters; an id the case gave
/// gains "-<id_suffix>". Either way a variant never takes the original's golden.
Case override_field(const Case& c, std::string_view field, const FieldValue& value,
                    std::string_view id_suffix);

}  // namespace pao::cases

// The JSON object a case is parsed from, as the case schema's rows read it (case_schema.hpp):
// typed, range-checked access with the defaults written where a field is read, and errors that
// name the source and the field ("case a.json: field 'partition_size' = 100 is not ...").
// Private to cases/.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace pao::cases {

class FieldInput {
 public:
  FieldInput(const nlohmann::json& j, std::string_view source) : j_(j), source_(source) {}

  const std::string& source() const { return source_; }
  /// The field is present (and not null).
  bool has(std::string_view name) const;
  const nlohmann::json& at(std::string_view name) const { return j_.at(std::string(name)); }
  /// Throws pao::Error "case <source>: field '<name>' <rule>".
  [[noreturn]] void bad(std::string_view name, const std::string& rule) const;

  /// An integer in [lo, hi].
  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const;
  /// An integer in [lo, 2^31), or `fallback` when absent.
  std::int32_t i32(std::string_view name, std::int64_t lo, std::int32_t fallback) const;
  /// An integer in [0, 2^64), or `fallback` when absent.
  std::uint64_t u64(std::string_view name, std::uint64_t fallback) const;
  double number(std::string_view name, double fallback) const;
  /// A positive finite f32 value, or `fallback` when absent.
  double positive(std::string_view name, double fallback) const;
  bool boolean(std::string_view name, bool fallback) const;
  std::string string(std::string_view name, std::string fallback) const;
  /// A list of `count` positive finite f32 values (per-KV-head scales).
  std::vector<double> scales(std::string_view name, std::int32_t count) const;
  /// num_seqs, checked against the memory limit before the per-sequence lists are built from it
  /// (a broadcast length, lengths drawn from max_seq_len): 2e9 sequences are 8 GB of lengths alone.
  std::int32_t num_seqs() const;
  /// A non-empty list of lengths in [0, 2^31); one entry with num_seqs given is every sequence's
  /// ("num_seqs": 128 with "seq_lens": [4096]).
  std::vector<std::int32_t> lengths(std::string_view name) const;

 private:
  const nlohmann::json& j_;
  std::string source_;
};

}  // namespace pao::cases

// The fields of a case JSON as the kernel kinds read and write their own (pao/kinds/): typed,
// range-checked access with the defaults written where the field is read, and errors that name
// the source and the field ("case a.json: field 'partition_size' = 100 is not ..."). The one
// reader of case JSON (case_json.cpp) implements FieldReader; JsonFieldWriter writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pao/plan/launch_shape.hpp"

namespace pao::cases {

class FieldReader {
 public:
  virtual ~FieldReader() = default;
  /// The field is present (and not null).
  virtual bool has(std::string_view name) const = 0;
  /// Throws pao::Error "case <source>: field '<name>' <rule>".
  [[noreturn]] virtual void bad(std::string_view name, const std::string& rule) const = 0;
  /// An integer in [lo, 2^31), or `fallback` when absent.
  virtual std::int32_t i32(std::string_view name, std::int64_t lo, std::int32_t fallback) const = 0;
  virtual bool boolean(std::string_view name, bool fallback) const = 0;
  virtual std::string string(std::string_view name, std::string fallback) const = 0;
  /// A non-empty list of lengths in [0, 2^31).
  virtual std::vector<std::int32_t> lengths(std::string_view name) const = 0;
};

class FieldWriter {
 public:
  virtual ~FieldWriter() = default;
  virtual void put_int(std::string_view name, std::int64_t value) = 0;
  virtual void put_bool(std::string_view name, bool value) = 0;
  virtual void put_string(std::string_view name, std::string_view value) = 0;
  virtual void put_lengths(std::string_view name, const std::vector<std::int32_t>& value) = 0;
};

/// A FieldWriter into a JSON object of any nlohmann flavour (json, ordered_json): the one writer of
/// case JSON (case_json.cpp) and of the simulator's workload JSON (sim/src/engine/report.cpp).
template <typename Json>
class JsonFieldWriter final : public FieldWriter {
 public:
  explicit JsonFieldWriter(Json& j) : j_(j) {}
  void put_int(std::string_view name, std::int64_t value) override { j_[std::string(name)] = value; }
  void put_bool(std::string_view name, bool value) override { j_[std::string(name)] = value; }
  void put_string(std::string_view name, std::string_view value) override {
    j_[std::string(name)] = std::string(value);
  }
  void put_lengths(std::string_view name, const std::vector<std::int32_t>& value) override {
    j_[std::string(name)] = value;
  }

 private:
  Json& j_;
};

/// The fields of a launch shape under their case JSON names, in case JSON order: num_seqs,
/// num_heads (unless `with_heads` is false: a kind without queries), num_kv_heads, head_size,
/// block_size.
void write_launch_shape(FieldWriter& w, const LaunchShape& s, bool with_heads = true);

}  // namespace pao::cases

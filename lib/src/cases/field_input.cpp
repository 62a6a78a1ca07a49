// A case JSON object's typed fields (field_input.hpp).
#include "cases/field_input.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/io/json_read.hpp"

namespace pao::cases {

namespace {

/// What a case holds per sequence, for the memory check before its lists are built: seq_lens and
/// query_lens (int32), and the copies a suite's expansion and a workload make of them.
constexpr double kBytesPerSequence = 32;

/// "[i] = <value>: <rule>", streamed (GCC 12 warns, -Wrestrict, a false positive, on "[" + std::string).
std::string element_rule(std::size_t i, const nlohmann::json& v, std::string_view rule) {
  std::ostringstream os;
  os << '[' << i << "] = " << json_excerpt(v) << ": " << rule;
  return os.str();
}

bool is_positive_f32(double x) { return x > 0 && std::isfinite(x) && x <= std::numeric_limits<float>::max(); }

}  // namespace

bool FieldInput::has(std::string_view name) const {
  return j_.contains(name) && !j_.at(std::string(name)).is_null();
}

void FieldInput::bad(std::string_view name, const std::string& rule) const {
  fail("case ", source_, ": field '", name, "' ", rule);
}

std::int64_t FieldInput::integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
  const nlohmann::json& v = at(name);
  if (!v.is_number_integer()) bad(name, "must be an integer, got " + json_excerpt(v));
  const auto out_of_range = [&] {
    bad(name,
        "= " + json_excerpt(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) out_of_range();
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) out_of_range();
  return x;
}

std::int32_t FieldInput::i32(std::string_view name, std::int64_t lo, std::int32_t fallback) const {
  return has(name) ? static_cast<std::int32_t>(integer(name, lo, std::numeric_limits<std::int32_t>::max()))
                   : fallback;
}

std::uint64_t FieldInput::u64(std::string_view name, std::uint64_t fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = at(name);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    bad(name, "must be an integer in [0, 2^64), got " + json_excerpt(v));
  return v.get<std::uint64_t>();
}

double FieldInput::number(std::string_view name, double fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = at(name);
  if (!v.is_number()) bad(name, "must be a number, got " + json_excerpt(v));
  return v.get<double>();
}

double FieldInput::positive(std::string_view name, double fallback) const {
  const double v = number(name, fallback);
  if (!is_positive_f32(v)) bad(name, "= " + json_excerpt(at(name)) + ": must be a positive finite f32 value");
  return v;
}

bool FieldInput::boolean(std::string_view name, bool fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = at(name);
  if (!v.is_boolean()) bad(name, "must be true or false, got " + json_excerpt(v));
  return v.get<bool>();
}

std::string FieldInput::string(std::string_view name, std::string fallback) const {
  if (!has(name)) return fallback;
  const nlohmann::json& v = at(name);
  if (!v.is_string()) bad(name, "must be a string, got " + json_excerpt(v));
  return v.get<std::string>();
}

std::vector<double> FieldInput::scales(std::string_view name, std::int32_t count) const {
  const nlohmann::json& v = at(name);
  if (!v.is_array() || v.size() != static_cast<std::size_t>(count))
    bad(name,
        "must be a list of num_kv_heads = " + std::to_string(count) + " numbers, got " + json_excerpt(v));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i].is_number() ? v[i].get<double>() : -1.0;
    if (!is_positive_f32(x)) bad(name, element_rule(i, v[i], "must be a positive finite f32 value"));
    out.push_back(x);
  }
  return out;
}

std::int32_t FieldInput::num_seqs() const {
  const std::int32_t n = i32("num_seqs", 1, 0);
  require_memory(
      "case " + source_ + ": field 'num_seqs' = " + std::to_string(n) + " (its per-sequence lists)",
      static_cast<double>(n) * kBytesPerSequence, "lower num_seqs");
  return n;
}

std::vector<std::int32_t> FieldInput::lengths(std::string_view name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_array() || v.empty()) bad(name, "must be a non-empty list of integers");
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0 ||
        v[i].get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      bad(name, element_rule(i, v[i], "must be an integer in [0, 2^31)"));
    out.push_back(v[i].get<std::int32_t>());
  }
  if (out.size() == 1 && has("num_seqs")) out.assign(static_cast<std::size_t>(num_seqs()), out.front());
  return out;
}

}  // namespace pao::cases

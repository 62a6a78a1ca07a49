// A case's "kv_quant" object: read (strictly: unknown keys, wrong types and broken rules named)
// and written (kv_quant_json.hpp).
#include "cases/kv_quant_json.hpp"

#include <algorithm>
#include <iterator>

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/io/json_read.hpp"

namespace pao::cases {

using nlohmann::json;

KVQuant read_kv_quant(const FieldInput& f, std::int32_t head_size) {
  const json& j = f.at("kv_quant");
  if (!j.is_object()) f.bad("kv_quant", "must be an object, got " + json_excerpt(j));
  static constexpr std::string_view kKeys[] = {"key",      "value", "scale_dtype", "zero_point_dtype",
                                               "rounding", "rule"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      f.bad("kv_quant", "unknown key \"" + excerpt(key) +
                            "\" (expected key, value, scale_dtype, zero_point_dtype, rounding, rule)");
    if (!value.is_string())
      f.bad("kv_quant", std::string(1, '"').append(excerpt(key)).append("\" must be a string, got ") +
                            json_excerpt(value));
  }
  auto text = [&](const char* key, const char* fallback) {
    return j.contains(key) ? j.at(key).get<std::string>() : std::string(fallback);
  };
  KVQuant q;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
    const char* key = t == CacheTensor::key ? "key" : "value";
    const std::string v = text(key, to_string(q.of(t)).c_str());
    const auto parsed = parse_tensor_quant(v);
    if (!parsed)
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) +
                            "\": expected \"by_token\", \"by_channel\" or \"group_<G>\" (G dims per scale)");
    if (const auto rule = tensor_quant_rule(*parsed, head_size))
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) + "\": " + *rule);
    (t == CacheTensor::key ? q.key : q.value) = *parsed;
  }
  for (const char* key : {"scale_dtype", "zero_point_dtype"}) {
    const std::string v = text(key, "f32");
    DType d = DType::f32;
    try {
      d = parse_dtype(v);
    } catch (const Error&) {
      d = DType::f64;  // refused below
    }
    if (d != DType::f32 && d != DType::f16)
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) + "\": expected \"f32\" or \"f16\"");
    (key[0] == 's' ? q.scale_dtype : q.zero_point_dtype) = d;
  }
  const std::string r = text("rounding", "half_even");
  const auto rounding = parse_rounding(r);
  if (!rounding)
    f.bad("kv_quant", "\"rounding\" = \"" + excerpt(r) + "\": expected \"half_even\" or \"half_away\"");
  q.rounding = *rounding;
  const std::string rule = text("rule", "minmax_zero");
  const auto parsed_rule = parse_rule(rule);
  if (!parsed_rule)
    f.bad("kv_quant", "\"rule\" = \"" + excerpt(rule) + "\": expected \"minmax_zero\" or \"openvino\"");
  q.rule = *parsed_rule;
  return q;
}

json kv_quant_json(const KVQuant& q) {
  json j;
  j["key"] = to_string(q.key);
  j["value"] = to_string(q.value);
  j["scale_dtype"] = std::string(dtype_name(q.scale_dtype));
  j["zero_point_dtype"] = std::string(dtype_name(q.zero_point_dtype));
  j["rounding"] = rounding_name(q.rounding);
  j["rule"] = rule_name(q.rule);
  return j;
}

}  // namespace pao::cases

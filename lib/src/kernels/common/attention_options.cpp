// The scalar rules of pao/kernels/attention_options.hpp.
#include "pao/kernels/attention_options.hpp"

#include <cmath>

#include "pao/core/error.hpp"

namespace pao {

const char* new_kv_source_name(NewKVSource source) {
  return source == NewKVSource::cache ? "cache" : "input";
}

bool try_parse_new_kv_source(std::string_view name, NewKVSource& source) {
  for (const NewKVSource s : {NewKVSource::input, NewKVSource::cache}) {
    if (name == new_kv_source_name(s)) {
      source = s;
      return true;
    }
  }
  return false;
}

float default_scale(std::int32_t head_size) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_size)));
}

float resolved_scale(const AttentionOptions& options, std::int32_t head_size) {
  return options.scale ? *options.scale : default_scale(head_size);
}

void check_attention_scalars(float scale, float soft_cap, std::int32_t sliding_window) {
  require(std::isfinite(scale), "scale = ", scale, ": must be finite");
  require(std::isfinite(soft_cap) && soft_cap >= 0, "soft_cap = ", soft_cap, ": must be >= 0 (0 = off)");
  require(sliding_window >= 0, "sliding_window = ", sliding_window, ": must be >= 0 (0 = off)");
}

void check_fp8_scale(float scale, std::string_view name) {
  require(std::isfinite(scale) && scale > 0, name, " = ", scale,
          ": an fp8 scale must be finite and positive");
}

}  // namespace pao

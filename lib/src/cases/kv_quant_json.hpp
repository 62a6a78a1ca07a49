// An integer cache's quantisation (pao/numerics/kv_quant.hpp) as a case JSON holds it. Private to
// cases/.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "cases/field_input.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao::cases {

/// A case's "kv_quant": {"key": "by_channel", "value": "by_token" | "group_32", "scale_dtype":
/// "f32" | "f16", "zero_point_dtype": "f32" | "f16", "rounding": "half_even" | "half_away", "rule":
/// "minmax_zero" | "openvino"}; every key optional (OpenVINO's u8 cache by default), none other
/// allowed. bits stays 8 (a u4 cache is named by kv_cache_dtype).
KVQuant read_kv_quant(const FieldInput& f, std::int32_t head_size);

/// The object read_kv_quant reads.
nlohmann::json kv_quant_json(const KVQuant& q);

}  // namespace pao::cases

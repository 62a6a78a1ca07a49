// The fields of a launch shape under their case JSON names (pao/cases/case_schema.hpp), for JSON
// that holds a shape but is not a case: the simulator's workload (sim/src/engine/report.cpp).
#pragma once

#include "pao/plan/launch_shape.hpp"

namespace pao::cases {

/// num_seqs, num_heads, num_kv_heads, head_size and block_size into a JSON object of any
/// nlohmann flavour (json, ordered_json), in case JSON order.
template <typename Json>
void write_launch_shape(Json& j, const LaunchShape& s) {
  j["num_seqs"] = s.num_seqs;
  j["num_heads"] = s.num_heads;
  j["num_kv_heads"] = s.num_kv_heads;
  j["head_size"] = s.head_size;
  j["block_size"] = s.block_size;
}

}  // namespace pao::cases

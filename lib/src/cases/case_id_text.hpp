// How a derived case id spells values (case_id.cpp): the pieces the case schema's id hooks add.
// Private to cases/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/cases/case.hpp"

namespace pao::cases::id_text {

/// The shortest text that reads back as `v` ("0.5", "30").
std::string number(double v);
/// "1.17.300" for up to 8 lengths; "128of4096" for many of one length; "<count>x<fnv32 hex>" else.
std::string lengths(const std::vector<std::int32_t>& v);
/// "auto", "u4", or the cache format's short name ("e4m3").
std::string cache(const Case& c);
/// An integer cache's quantisation when not OpenVINO's default: "kqtokvqg32" (key by token, value
/// in groups of 32 dims), then the parameter dtypes and the rounding when not f32 / half_even.
std::string quant(const KVQuant& q);
/// "0.5_0.25": per-head scales.
std::string scales(const std::vector<double>& v);

}  // namespace pao::cases::id_text

// The bit patterns of floats, for tests that compare results bit for bit (a NaN's payload and a
// zero's sign included).
#pragma once

#include <bit>
#include <cstdint>

namespace pao::test {

inline std::uint32_t f32_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
inline std::uint64_t f64_bits(double d) { return std::bit_cast<std::uint64_t>(d); }
inline float f32_from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

}  // namespace pao::test

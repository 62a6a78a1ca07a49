// Units of rounding error of a dtype, from its row of the dtype table (core/dtype.hpp): what the
// diff's tolerances, the golden invariants' bounds and the tests measure errors in.
#pragma once

#include "pao/core/dtype.hpp"

namespace pao {

/// Unit roundoff 2^-p of a floating-point dtype with a p-bit significand: f16 2^-11, bf16 2^-8,
/// f32 2^-24, f64 2^-53 (fp8_e4m3 2^-4, fp8_e5m2 2^-3); integers use f32's.
double unit_roundoff(DType dtype);

/// The spacing of `dtype`'s values at |value| (the subnormal spacing near 0); integers use f32's.
double ulp_of(DType dtype, double value);

}  // namespace pao

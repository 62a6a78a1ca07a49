// Host-side element access by runtime dtype: one element at a time (decode_element,
// encode_element, round_to_dtype) and fast bulk conversion of contiguous runs, which the
// attention kernels use in their inner loops. Float formats follow pao/numerics/formats.hpp exactly
// (RNE, fp8 saturation, canonical NaN); the bulk paths give the same bits as the scalar ones.
#pragma once

#include <cstddef>

#include "pao/core/dtype.hpp"

namespace pao {

/// The value of the element of type t at p, exactly (i64 beyond 2^53 rounds to nearest).
double decode_element(DType t, const void* p);

/// Stores v as one element of type t at p. Floats: one round-to-nearest-even from v (f32 is
/// (float)v; f16/bf16 overflow to inf; fp8 saturates). Integers: rounded to nearest, ties to
/// even; throws pao::Error if v is NaN or the rounded value is outside the type's range.
void encode_element(DType t, double v, void* p);

/// The value v becomes when stored as t: decode(encode(v)). Throws as encode_element does.
double round_to_dtype(DType t, double v);

/// Decodes n contiguous elements of type t. Fast paths for f32, f16, bf16 and fp8; f64 and the
/// integer dtypes are accepted too (f64 -> f32 rounds to nearest even).
void decode_to_f32(DType t, const void* src, float* dst, std::size_t n);
void decode_to_f64(DType t, const void* src, double* dst, std::size_t n);

/// Encodes n contiguous values as type t, element by element as encode_element would (so the
/// integer dtypes throw on out-of-range values).
void encode_from_f32(DType t, const float* src, void* dst, std::size_t n);
void encode_from_f64(DType t, const double* src, void* dst, std::size_t n);

}  // namespace pao

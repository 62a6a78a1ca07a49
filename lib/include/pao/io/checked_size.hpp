// Overflow-checked tensor sizes, for shapes read from files (and shapes about to be written).
#pragma once

#include <cstdint>
#include <optional>

#include "pao/core/tensor.hpp"

namespace pao {

/// numel * dtype_size of a contiguous tensor of `shape`, or nullopt if a dimension is negative
/// or the size, or any row-major stride in bytes, would overflow int64 (so a shape accepted here
/// is safe for Tensor, shape_numel and contiguous_strides even when it has zero elements).
std::optional<std::uint64_t> checked_tensor_bytes(const Shape& shape, DType dtype);

}  // namespace pao

// The shape of one kernel launch as plain data (no CUDA headers): grid, CTA, dynamic shared memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pao::cuda {

struct LaunchDims {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

struct KernelLaunch {
  LaunchDims grid;
  LaunchDims block;
  std::size_t dynamic_shared_bytes = 0;
};

}  // namespace pao::cuda

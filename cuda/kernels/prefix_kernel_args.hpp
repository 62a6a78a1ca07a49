// The argument of the prefix kernel: the caller's PrefixParams, the plan's CTA and tile tables
// (device memory) and the tile width. Passed by value. Plain C++ (the CPU emulation uses it).
#pragma once

#include <cstdint>

#include "pao/cuda/prefix_launch.hpp"
#include "pao/cuda/prefix_params.hpp"

namespace pao::cuda::detail {

struct PrefixKernelArgs {
  PrefixParams p;
  const PrefixDeviceCta* ctas = nullptr;    // [grid_x * grid_y * grid_z], linear grid order
  const PrefixDeviceTile* tiles = nullptr;  // the plan's tiles
  std::int32_t max_tile_width = 0;
};

}  // namespace pao::cuda::detail

// The tuning knobs of pao's kernels, in one struct owned by the plan: how a launch is decomposed
// (V2's partition size, the prefix kernel's tiles) and the GPU model the kernel precision emulates
// (warp size, threads per CTA). vLLM's defaults are written here once; every struct that carries
// them (a case, a plan's shape, the simulator's kernel configuration) derives from KernelTuning,
// and their rules are checked here once (check_tuning).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pao/plan/kernel_variant.hpp"

namespace pao {

struct KernelTuning {
  /// V2: tokens per partition, a multiple of the block size (vLLM's PARTITION_SIZE).
  std::int32_t partition_size = 512;
  /// V1 / V2 / reduce: threads per CTA, a multiple of the warp size (vLLM's NUM_THREADS).
  std::int32_t threads_per_cta = 128;
  /// The kernel precision's GPU: 32 on NVIDIA, 64 on the BI-V100; a power of two.
  std::int32_t warp_size = 32;
  /// Prefix: query rows per CTA and keys per new-token tile (vLLM's BLOCK_M, BLOCK_N) and keys
  /// per context tile (its TRITON_BLOCK_SIZE).
  std::int32_t block_m = 128;
  std::int32_t block_n = 64;
  std::int32_t context_tile = 32;

  bool operator==(const KernelTuning&) const = default;
};

/// A broken rule of a tuning: the field and what is wrong with its value.
struct TuningViolation {
  const char* field;  // "partition_size"
  std::string rule;   // "= 100 is not a positive multiple of block_size = 16"
};

/// The first rule `t` breaks for a kernel run as `variant` with blocks of `block_size` tokens (the
/// fields each variant uses: V2 a partition size, the decode kernels a warp and threads, the prefix
/// kernel and its fallback their tiles):
///   partition_size  a positive multiple of block_size (V2: a partition is whole blocks)
///   warp_size       a positive power of two
///   threads_per_cta a positive multiple of warp_size
///   block_m, block_n, context_tile  positive
std::optional<TuningViolation> check_tuning(const KernelTuning& t, KernelVariant variant,
                                            std::int32_t block_size);

/// Throws pao::Error "<field> <rule>" for the first rule broken.
void require_tuning(const KernelTuning& t, KernelVariant variant, std::int32_t block_size);

}  // namespace pao

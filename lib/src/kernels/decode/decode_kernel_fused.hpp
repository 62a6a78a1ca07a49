// Kernel precision of decode, fast loops for the common case: the cache holds the activation
// dtype (f32, f16, bf16; no fp8 scaling) in vLLM's dense layouts (key [head_size/x][block][x]
// with x equal to the kernel's dims_per_step, value [head_size][block]) and a whole block is
// visible. They compute exactly what decode_kernel.cpp's general per-block loops compute,
// operation by operation and in the same order; only where the values live changes (registers
// instead of tiles in memory). tests/kernels/decode/test_decode_kernel.cpp checks the two bit for bit, and
// the emulated CUDA kernels check both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/decode/decode_problem.hpp"
#include "pao/kernels/decode_geometry.hpp"

namespace pao::detail {

/// Whether this machine and problem can use the fused loops (AVX-512; the layouts and dtypes
/// above). When false, the general loops run every block.
bool fused_decode_supported(const DecodeProblem& p, const DecodeGeometry& g);

/// One KV head's fused-loop state for one partition: the query in the lane pattern of the Q·K
/// loop and the scratch of both loops.
class FusedDecodeBlocks {
 public:
  /// q: [G][head_size] fp32 query values of the G heads that share the KV head.
  FusedDecodeBlocks(const DecodeProblem& p, const DecodeGeometry& g, const float* q, std::int32_t G);

  /// Raw Q·K dot products of the G heads against the full block at `key_slice` (the block's
  /// [head_size/x][block_size][x] run): out[g * out_stride + t] for t < block_size.
  void qk(const std::byte* key_slice, float* out, std::int64_t out_stride);

  /// Loads the full block at `value_slice` (its [head_size][block_size] run) as [token][dim].
  void load_value(const std::byte* value_slice);

  /// acc[d] += dot(probs[0, v_vec_size), V rows first_token + [0, v_vec_size)) for every dim
  /// d, the products and sums rounded as vLLM's activation dtype rounds them (see
  /// decode_kernel.cpp's pv_dot). Uses the block of the last load_value().
  void pv(const float* probs, std::int32_t first_token, float* acc) const;

 private:
  const DecodeProblem& p_;
  const DecodeGeometry& g_;
  std::int32_t G_;
  float* q_lanes_;  // [G][head_size / dims_per_step][16]
  float* dots_;     // [G][block_size][dims_per_step]
  float* v_tile_;   // [block_size][head_size]
};

}  // namespace pao::detail

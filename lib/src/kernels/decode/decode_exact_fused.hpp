// Exact precision of decode, fast loops for the common case: an f16 or bf16 cache in vLLM's
// dense layouts (key [head_size/8][block][8], value [head_size][block]) and a whole block
// visible. They compute what decode_exact.cpp's general per-block loops compute, every fp64
// operation in the same order (so the two agree bit for bit; tests/kernels/decode/test_decode_fused.cpp
// checks it), converting the stored elements in registers instead of through a tile in memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/decode/decode_partition.hpp"
#include "kernels/decode/decode_problem.hpp"

namespace pao::detail {

/// Whether this machine (AVX-512) and problem (dtypes, layouts) can use the fused loops.
bool fused_exact_supported(const DecodeProblem& p);

/// One KV head's fused-loop state for one partition.
class FusedExactBlocks {
 public:
  /// q: [G][head_size] fp64 query values of the G heads that share the KV head.
  FusedExactBlocks(const DecodeProblem& p, const double* q, std::int32_t G);

  /// Raw Q·K dot products of the G heads against the full block at `key_slice`:
  /// out[g * out_stride + t] for t < block_size. Per token: two 8-lane fma chains (even and
  /// odd chunks of 8 dims), added lane-wise, then the lanes summed left to right from 0.
  void qk(const std::byte* key_slice, double* out, std::int64_t out_stride);

  /// For the first `num_blocks` blocks of the partition (whole blocks), in block order:
  /// acc[g * acc_stride + d * 8 + lane] = Σ w[g * w_stride + t] * V[d][t] over the partition's
  /// tokens t in lane t % 8, an fma chain from +0 in token order (every d < head_size and lane is
  /// set, to 0 when num_blocks is 0).
  void pv(const PartitionTask& task, std::int32_t num_blocks, const double* w, std::int64_t w_stride,
          double* acc, std::size_t acc_stride) const;

 private:
  const DecodeProblem& p_;
  const double* q_;
  std::int32_t G_;
  double* parts_;  // [G][block_size][8]
};

}  // namespace pao::detail

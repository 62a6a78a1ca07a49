// The V2 reduce in both precisions.
#include "kernels/decode/decode_reduce.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "numerics/exp_f64.hpp"
#include "pao/numerics/kernel_math.hpp"

namespace pao::detail {

void reduce_exact(const double* tmp, const double* max_logits, const double* exp_sums,
                  std::int32_t num_partitions, std::int32_t hs, double* out) {
  std::fill(out, out + hs, 0.0);
  double m = -std::numeric_limits<double>::infinity();
  for (std::int32_t j = 0; j < num_partitions; ++j)
    if (exp_sums[j] > 0) m = std::max(m, max_logits[j]);
  if (m == -std::numeric_limits<double>::infinity()) return;  // no visible token anywhere
  double total = 0.0;
  for (std::int32_t j = 0; j < num_partitions; ++j) {
    if (!(exp_sums[j] > 0)) continue;
    const double w = exp_sums[j] * exp_f64(max_logits[j] - m);
    total += w;
    for (std::int32_t d = 0; d < hs; ++d) out[d] += w * tmp[static_cast<std::size_t>(j) * hs + d];
  }
  for (std::int32_t d = 0; d < hs; ++d) out[d] /= total;
}

void reduce_kernel(const DecodeGeometry& geo, const float* tmp, const float* max_logits,
                   const float* exp_sums, std::int32_t num_partitions, std::int32_t hs, float* out) {
  if (num_partitions == 1) {
    std::copy(tmp, tmp + hs, out);
    return;
  }
  // The max is exact whatever the tree; fmaxf semantics (a NaN operand yields the other).
  float max_logit = -FLT_MAX;
  for (std::int32_t j = 0; j < num_partitions; ++j) max_logit = std::fmax(max_logit, max_logits[j]);

  const std::int32_t NT = geo.num_threads, W = geo.warp_size, NW = geo.num_warps;
  thread_local std::vector<float> rescaled, partial, lanes, warp_sums;
  rescaled.resize(static_cast<std::size_t>(num_partitions));
  partial.assign(static_cast<std::size_t>(NT), 0.0f);
  lanes.resize(static_cast<std::size_t>(W));
  warp_sums.resize(static_cast<std::size_t>(NW));
  for (std::int32_t j = 0; j < num_partitions; ++j) {
    rescaled[static_cast<std::size_t>(j)] = exp_sums[j] * kernel_exp(max_logits[j] - max_logit);
    partial[static_cast<std::size_t>(j % NT)] += rescaled[static_cast<std::size_t>(j)];
  }
  for (std::int32_t w = 0; w < NW; ++w) {
    std::copy(partial.begin() + w * W, partial.begin() + (w + 1) * W, lanes.begin());
    warp_sums[static_cast<std::size_t>(w)] = butterfly_sum(lanes.data(), W);
  }
  const float global_exp_sum = butterfly_sum(warp_sums.data(), NW);
  const float inv = 1.0f / (global_exp_sum + 1e-6f);
  for (std::int32_t d = 0; d < hs; ++d) {
    float acc = 0.0f;
    // vLLM: acc += tmp * exp_sum_j * inv, which nvcc contracts to fma(tmp * exp_sum_j, inv, acc).
    for (std::int32_t j = 0; j < num_partitions; ++j)
      acc = std::fma(tmp[static_cast<std::size_t>(j) * hs + d] * rescaled[static_cast<std::size_t>(j)], inv,
                     acc);
    out[d] = acc;
  }
}

}  // namespace pao::detail

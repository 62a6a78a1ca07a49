// What the decode and prefix low-precision references do after the logits, in the style of vLLM's
// PyTorch test reference: softmax in fp32, probabilities rounded to the activation dtype, p·v
// accumulated in fp32, one rounding at the end.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "pao/numerics/element.hpp"

namespace pao::test {

/// `v` rounded to the activation dtype `t`, as fp32.
inline float round_act(DType t, float v) { return static_cast<float>(round_to_dtype(t, v)); }

/// One query row. `p` holds its logits (masked ones -inf) and becomes its rounded probabilities;
/// out[d] = round(Σ_j p[j] · v[j * v_stride + d]) for d < head_size, the V elements taken as fp32.
template <typename VElem>
void lowp_softmax_pv(DType t, std::vector<float>& p, const VElem* v, std::int64_t v_stride,
                     std::int64_t head_size, double* out) {
  const auto L = static_cast<std::int64_t>(p.size());
  float m = -std::numeric_limits<float>::infinity();
  for (float z : p) m = std::max(m, z);
  float denom = 0;
  for (auto& z : p) denom += (z = std::exp(z - m));
  for (auto& z : p) z = round_act(t, z / denom);
  for (std::int64_t d = 0; d < head_size; ++d) {
    float acc = 0;
    for (std::int64_t j = 0; j < L; ++j)
      if (p[static_cast<std::size_t>(j)] != 0)
        acc += p[static_cast<std::size_t>(j)] * static_cast<float>(v[j * v_stride + d]);
    out[d] = round_act(t, acc);
  }
}

}  // namespace pao::test

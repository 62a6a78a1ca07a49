// A plain low-precision decode attention, in the style of vLLM's PyTorch test reference: q·k in
// fp32 rounded to the activation dtype, softmax in fp32, probabilities rounded to the
// activation dtype, p·v accumulated in fp32, one rounding at the end. Its error against the
// fp64 truth sets the scale of the kernel precision's error bound (FlashAttention's rule).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "compare.hpp"
#include "dense_reference.hpp"
#include "lowp_softmax.hpp"

namespace pao::test {

inline std::vector<double> lowp_decode_reference(const cases::DecodeCase& c) {
  const auto& s = c.spec;
  const DType t = s.dtype;
  const std::int64_t hs = s.head_size, G = s.num_heads / s.num_kv_heads;
  const float scale =
      s.scale ? static_cast<float>(*s.scale) : static_cast<float>(1.0 / std::sqrt(double(hs)));
  const CacheF64 caches(c);
  std::vector<double> out(static_cast<std::size_t>(s.num_seqs * s.num_heads * hs), 0.0);
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const std::int64_t L = s.seq_lens[static_cast<std::size_t>(seq)];
    for (std::int64_t kvh = 0; kvh < s.num_kv_heads; ++kvh) {
      GatheredKV kv = gather_sequence(c, caches, seq, kvh);
      for (auto* rows : {&kv.k, &kv.v})
        for (double& x : *rows) x = round_act(t, static_cast<float>(x));
      for (std::int64_t h = kvh * G; h < (kvh + 1) * G; ++h) {
        std::vector<float> q(static_cast<std::size_t>(hs));
        for (std::int64_t d = 0; d < hs; ++d)
          q[static_cast<std::size_t>(d)] = static_cast<float>(c.query.at({seq, h, d}));
        std::vector<float> p(static_cast<std::size_t>(L));
        for (std::int64_t j = 0; j < L; ++j) {
          float dot = 0;
          for (std::int64_t d = 0; d < hs; ++d)
            dot += q[static_cast<std::size_t>(d)] *
                   static_cast<float>(kv.k[static_cast<std::size_t>(j * hs + d)]);
          float z = round_act(t, scale * dot);
          if (s.soft_cap > 0) z = s.soft_cap * std::tanh(z / s.soft_cap);
          if (s.alibi) z += static_cast<float>(c.alibi_slopes.at({h})) * static_cast<float>(j - L + 1);
          if (s.sliding_window > 0 && L - 1 - j >= s.sliding_window)
            z = -std::numeric_limits<float>::infinity();
          p[static_cast<std::size_t>(j)] = z;
        }
        lowp_softmax_pv(t, p, kv.v.data(), hs, hs, out.data() + (seq * s.num_heads + h) * hs);
      }
    }
  }
  return out;
}

}  // namespace pao::test

// The kernel precision of the prefix kernel transcribed literally from docs/prefix.md ("Kernel
// precision, step by step"): scalar loops, one CTA (sequence, head, query tile) at a time, every
// tile walked, no skipping, no vectorisation. The library's optimised implementation must equal it
// bit for bit; so must a CUDA port. Shares nothing with the library but kernel_exp / kernel_tanh
// (the shared device math) and the number formats.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "pao/numerics/kernel_math.hpp"
#include "prefix_reference.hpp"

namespace pao::test {

/// out[token][head][dim], the fp32 values before the rounding to the output dtype.
inline std::vector<float> kernel_spec_prefix(const cases::PrefixCase& c) {
  const auto& s = c.spec;
  const DType t = s.dtype;
  const std::int64_t hs = s.head_size, H = s.num_heads, nkv = s.num_kv_heads, G = H / nkv;
  const auto scale = static_cast<float>(reference_scale(s));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<float> out(static_cast<std::size_t>(c.query.size(0) * H * hs), 0.0f);
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const DenseKV kv = gather_sequence(c, seq);
    const std::int64_t ctx = kv.ctx_len, qlen = kv.seq_len - kv.ctx_len;
    // K/V as the kernel holds them: fp8 -> float(fp8) * scale rounded to the activation dtype
    // (the fp64 product is exact, so rounding it once is the same); other dtypes exact.
    std::vector<float> k(kv.k.size()), v(kv.v.size());
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i] = round_act(t, static_cast<float>(kv.k[i]));
      v[i] = round_act(t, static_cast<float>(kv.v[i]));
    }
    // The tiles of a CTA: context tiles, then new-token tiles up to (m_tile + 1) * block_m.
    struct Tile {
      std::int64_t first_pos, num_keys;
    };
    for (std::int64_t m_tile = 0; m_tile * s.block_m < qlen; ++m_tile) {
      std::vector<Tile> tiles;
      for (std::int64_t k0 = 0; k0 < ctx; k0 += s.context_tile)
        tiles.push_back({k0, std::min<std::int64_t>(s.context_tile, ctx - k0)});
      for (std::int64_t n0 = 0; n0 < (m_tile + 1) * s.block_m; n0 += s.block_n)
        tiles.push_back({ctx + n0, std::clamp<std::int64_t>(qlen - n0, 0, s.block_n)});
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t kvh = h / G;
        const float slope = s.alibi ? static_cast<float>(c.alibi_slopes.at({h})) : 0.0f;
        for (std::int64_t i = m_tile * s.block_m; i < std::min<std::int64_t>((m_tile + 1) * s.block_m, qlen);
             ++i) {
          const std::int64_t token = kv.first_token + i, q_pos = ctx + i;
          std::vector<float> q(static_cast<std::size_t>(hs)), acc(static_cast<std::size_t>(hs), 0.0f);
          for (std::int64_t d = 0; d < hs; ++d)
            q[static_cast<std::size_t>(d)] = static_cast<float>(c.query.at({token, h, d}));
          float m_i = neg_inf, l_i = 0.0f;
          for (const Tile& tile : tiles) {
            std::vector<float> z(static_cast<std::size_t>(tile.num_keys)), p(z.size());
            float m_ij = m_i;
            for (std::int64_t j = 0; j < tile.num_keys; ++j) {
              const std::int64_t k_pos = tile.first_pos + j;
              const float* kr = k.data() + (k_pos * nkv + kvh) * hs;
              float dot = q[0] * kr[0];
              for (std::int64_t d = 1; d < hs; ++d)
                dot = std::fma(q[static_cast<std::size_t>(d)], kr[d], dot);
              float zj = scale * dot;
              if (s.soft_cap > 0) zj = s.soft_cap * kernel_tanh(zj / s.soft_cap);
              if (s.alibi) zj = zj + slope * static_cast<float>(k_pos - q_pos);
              if (!prefix_visible(s, q_pos, k_pos)) zj = neg_inf;
              z[static_cast<std::size_t>(j)] = zj;
              m_ij = std::max(m_ij, zj);
            }
            float l_ij = 0.0f;
            for (std::size_t j = 0; j < z.size(); ++j) {
              p[j] = m_ij == neg_inf ? 0.0f : kernel_exp(z[j] - m_ij);
              l_ij = l_ij + p[j];
            }
            const float alpha = m_i == neg_inf ? 0.0f : kernel_exp(m_i - m_ij);
            for (auto& a : acc) a = a * alpha;
            for (std::int64_t j = 0; j < tile.num_keys; ++j) {
              const float pj = round_act(t, p[static_cast<std::size_t>(j)]);
              if (pj == 0.0f) continue;
              const float* vr = v.data() + ((tile.first_pos + j) * nkv + kvh) * hs;
              for (std::int64_t d = 0; d < hs; ++d)
                acc[static_cast<std::size_t>(d)] = std::fma(pj, vr[d], acc[static_cast<std::size_t>(d)]);
            }
            l_i = std::fma(l_i, alpha, l_ij);
            m_i = m_ij;
          }
          const float denom = l_i + 1e-10f;
          for (std::int64_t d = 0; d < hs; ++d)
            out[static_cast<std::size_t>((token * H + h) * hs + d)] =
                acc[static_cast<std::size_t>(d)] / denom;
        }
      }
    }
  }
  return out;
}

}  // namespace pao::test

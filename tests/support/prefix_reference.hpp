// Independent references for the prefix kernel, written apart from the library:
//  - dense_prefix_reference: fp64, the whole sequence at once. Context K/V gathered through the
//    block table with its own index arithmetic (Tensor::at on the documented layouts), new K/V
//    from key / value (or, with new_kv_source "cache", from their slots of the cache), an explicit visibility
//    mask (causal, sliding window), ALiBi bias, softmax and weighted sum. The oracle's exact precision must
//    equal it to 1e-12.
//  - lowp_prefix_reference: a plain low-precision implementation in the style of vLLM's PyTorch
//    test reference (K/V in the activation dtype, logits in fp32 rounded to the activation dtype,
//    softmax in fp32, probabilities rounded, fp32 P·V, one final rounding). Its error against the
//    fp64 truth sets the kernel precision's bound (FlashAttention's rule).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "integer_reference.hpp"
#include "lowp_softmax.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/numerics/element.hpp"

namespace pao::test {

/// A sequence's K and V, context then new tokens: [pos][kv_head][dim], dequantized to fp64.
struct DenseKV {
  std::int64_t seq_len = 0, ctx_len = 0, first_token = 0;
  std::vector<double> k, v;
};

inline double cache_element(const cases::PrefixCase& c, bool key, std::int64_t seq, std::int64_t pos,
                            std::int64_t h, std::int64_t d) {
  const std::int64_t bs = c.spec.block_size;
  const auto block = static_cast<std::int64_t>(c.block_tables.at({seq, pos / bs}));
  const std::int64_t t = pos % bs;
  double v;
  if (c.spec.kv_layout == KVLayout::nhd) {
    v = (key ? c.key_cache : c.value_cache).at({block, t, h, d});
  } else if (c.spec.kv_layout == KVLayout::hnd) {
    v = (key ? c.key_cache : c.value_cache).at({block, h, t, d});
  } else if (key) {
    const std::int64_t x = c.key_cache.size(4);
    v = c.key_cache.at({block, h, d / x, t, d % x});
  } else {
    v = c.value_cache.at({block, h, d, t});
  }
  const DType cd = c.key_cache.dtype();
  if (cd == DType::u8 || cd == DType::i8)
    return integer_cache_value(c.quant, key, c.spec.head_size, block, h, t, d, v);
  const bool fp8 = cd == DType::fp8_e4m3 || cd == DType::fp8_e5m2;
  return fp8 ? v * static_cast<float>(key ? c.spec.k_scale : c.spec.v_scale) : v;
}

inline DenseKV gather_sequence(const cases::PrefixCase& c, std::int64_t seq) {
  const std::int64_t nkv = c.spec.num_kv_heads, hs = c.spec.head_size;
  DenseKV kv;
  kv.first_token = static_cast<std::int64_t>(c.query_start_loc.at({seq}));
  const auto query_len = static_cast<std::int64_t>(c.query_start_loc.at({seq + 1})) - kv.first_token;
  kv.seq_len = static_cast<std::int64_t>(c.seq_lens.at({seq}));
  kv.ctx_len = kv.seq_len - query_len;
  kv.k.resize(static_cast<std::size_t>(kv.seq_len * nkv * hs));
  kv.v.resize(kv.k.size());
  for (std::int64_t pos = 0; pos < kv.seq_len; ++pos)
    for (std::int64_t h = 0; h < nkv; ++h)
      for (std::int64_t d = 0; d < hs; ++d) {
        const auto at = static_cast<std::size_t>((pos * nkv + h) * hs + d);
        // new_kv_source "cache": the new tokens' slots of the cache, as the context.
        if (pos < kv.ctx_len || c.spec.new_kv_source == NewKVSource::cache) {
          kv.k[at] = cache_element(c, true, seq, pos, h, d);
          kv.v[at] = cache_element(c, false, seq, pos, h, d);
        } else {
          kv.k[at] = c.key.at({kv.first_token + pos - kv.ctx_len, h, d});
          kv.v[at] = c.value.at({kv.first_token + pos - kv.ctx_len, h, d});
        }
      }
  return kv;
}

/// Whether the query at sequence position q_pos sees the key at k_pos.
inline bool prefix_visible(const cases::Case& s, std::int64_t q_pos, std::int64_t k_pos) {
  return k_pos <= q_pos && (s.sliding_window == 0 || q_pos - k_pos < s.sliding_window);
}

inline double reference_scale(const cases::Case& s) {
  return s.scale ? static_cast<double>(static_cast<float>(*s.scale))
                 : static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_size))));
}

/// out[token][head][dim] in fp64 (row-major, num_tokens x num_heads x head_size).
inline std::vector<double> dense_prefix_reference(const cases::PrefixCase& c) {
  const auto& s = c.spec;
  const std::int64_t hs = s.head_size, H = s.num_heads, nkv = s.num_kv_heads, G = H / nkv;
  const double scale = reference_scale(s);
  std::vector<double> out(static_cast<std::size_t>(c.query.size(0) * H * hs), 0.0);
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const DenseKV kv = gather_sequence(c, seq);
    const std::int64_t L = kv.seq_len;
    std::vector<double> logits(static_cast<std::size_t>(L)), w(static_cast<std::size_t>(L));
    for (std::int64_t i = 0; i < L - kv.ctx_len; ++i) {
      const std::int64_t token = kv.first_token + i, q_pos = kv.ctx_len + i;
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t kvh = h / G;
        std::vector<double> q(static_cast<std::size_t>(hs));
        for (std::int64_t d = 0; d < hs; ++d) q[static_cast<std::size_t>(d)] = c.query.at({token, h, d});
        double m = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < hs; ++d)
            dot += q[static_cast<std::size_t>(d)] * kv.k[static_cast<std::size_t>((j * nkv + kvh) * hs + d)];
          double z = scale * dot;
          if (s.soft_cap > 0) z = s.soft_cap * std::tanh(z / s.soft_cap);
          if (s.alibi) z += c.alibi_slopes.at({h}) * static_cast<double>(j - q_pos);
          logits[static_cast<std::size_t>(j)] =
              prefix_visible(s, q_pos, j) ? z : -std::numeric_limits<double>::infinity();
          m = std::max(m, logits[static_cast<std::size_t>(j)]);
        }
        double denom = 0;
        for (std::int64_t j = 0; j < L; ++j)
          denom += (w[static_cast<std::size_t>(j)] = std::exp(logits[static_cast<std::size_t>(j)] - m));
        for (std::int64_t d = 0; d < hs; ++d) {
          double acc = 0;
          for (std::int64_t j = 0; j < L; ++j)
            if (w[static_cast<std::size_t>(j)] != 0)
              acc +=
                  w[static_cast<std::size_t>(j)] * kv.v[static_cast<std::size_t>((j * nkv + kvh) * hs + d)];
          out[static_cast<std::size_t>((token * H + h) * hs + d)] = acc / denom;
        }
      }
    }
  }
  return out;
}

inline std::vector<double> lowp_prefix_reference(const cases::PrefixCase& c) {
  const auto& s = c.spec;
  const DType t = s.dtype;
  const std::int64_t hs = s.head_size, H = s.num_heads, nkv = s.num_kv_heads, G = H / nkv;
  const auto scale = static_cast<float>(reference_scale(s));
  std::vector<double> out(static_cast<std::size_t>(c.query.size(0) * H * hs), 0.0);
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const DenseKV kv = gather_sequence(c, seq);
    const std::int64_t L = kv.seq_len;
    std::vector<float> k(kv.k.size()), v(kv.v.size());
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i] = round_act(t, static_cast<float>(kv.k[i]));
      v[i] = round_act(t, static_cast<float>(kv.v[i]));
    }
    std::vector<float> p(static_cast<std::size_t>(L));
    for (std::int64_t i = 0; i < L - kv.ctx_len; ++i) {
      const std::int64_t token = kv.first_token + i, q_pos = kv.ctx_len + i;
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t kvh = h / G;
        std::vector<float> q(static_cast<std::size_t>(hs));
        for (std::int64_t d = 0; d < hs; ++d)
          q[static_cast<std::size_t>(d)] = static_cast<float>(c.query.at({token, h, d}));
        for (std::int64_t j = 0; j < L; ++j) {
          float dot = 0;
          for (std::int64_t d = 0; d < hs; ++d)
            dot += q[static_cast<std::size_t>(d)] * k[static_cast<std::size_t>((j * nkv + kvh) * hs + d)];
          float z = round_act(t, scale * dot);
          if (s.soft_cap > 0) z = s.soft_cap * std::tanh(z / s.soft_cap);
          if (s.alibi) z += static_cast<float>(c.alibi_slopes.at({h})) * static_cast<float>(j - q_pos);
          if (!prefix_visible(s, q_pos, j)) z = -std::numeric_limits<float>::infinity();
          p[static_cast<std::size_t>(j)] = z;
        }
        lowp_softmax_pv(t, p, v.data() + kvh * hs, nkv * hs, hs, out.data() + (token * H + h) * hs);
      }
    }
  }
  return out;
}

}  // namespace pao::test

// An independent dense fp64 attention for decode cases, written apart from the library: it
// gathers K and V with its own index arithmetic (Tensor::at on the documented layouts), builds
// the logits, mask and softmax explicitly and takes the weighted sum. Tests compare the
// oracle's exact precision against it.
#pragma once

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "integer_reference.hpp"
#include "pao/cases/case_tensors.hpp"

namespace pao::test {

/// Both caches decoded to fp64, element by element, in their stored (row-major) order, and the
/// per-KV-head fp8 scales when the test uses them (empty: the case's per-tensor scales).
struct CacheF64 {
  std::vector<double> k, v;
  std::vector<float> k_head_scales, v_head_scales;
  explicit CacheF64(const cases::DecodeCase& c, std::vector<float> k_heads = {},
                    std::vector<float> v_heads = {})
      : k(c.key_cache.to_f64()),
        v(c.value_cache.to_f64()),
        k_head_scales(std::move(k_heads)),
        v_head_scales(std::move(v_heads)) {}
  double scale(const cases::DecodeCase& c, bool key, std::int64_t h) const {
    const auto& heads = key ? k_head_scales : v_head_scales;
    return heads.empty() ? static_cast<float>(key ? c.spec.k_scale : c.spec.v_scale)
                         : heads[static_cast<std::size_t>(h)];
  }
};

/// K or V element of logical token `token` of sequence `seq`, KV head `h`, dim `d`, dequantized:
/// the block from the block table, then the documented layout's index formula.
inline double gather(const cases::DecodeCase& c, const CacheF64& f, bool key, std::int64_t seq,
                     std::int64_t token, std::int64_t h, std::int64_t d) {
  const std::int64_t bs = c.spec.block_size, hs = c.spec.head_size, nkv = c.spec.num_kv_heads;
  const std::int64_t block = static_cast<std::int64_t>(c.block_tables.at({seq, token / bs}));
  const std::int64_t t = token % bs;
  std::int64_t i;
  if (c.spec.kv_layout == KVLayout::nhd) {
    i = ((block * bs + t) * nkv + h) * hs + d;  // [nb, bs, nkv, hs]
  } else if (c.spec.kv_layout == KVLayout::hnd) {
    i = ((block * nkv + h) * bs + t) * hs + d;  // [nb, nkv, bs, hs]
  } else if (key) {
    const std::int64_t x = c.key_cache.size(4);  // [nb, nkv, hs/x, bs, x]
    i = (((block * nkv + h) * (hs / x) + d / x) * bs + t) * x + d % x;
  } else {
    i = ((block * nkv + h) * hs + d) * bs + t;  // [nb, nkv, hs, bs]
  }
  const double v = (key ? f.k : f.v)[static_cast<std::size_t>(i)];
  const bool fp8 = c.key_cache.dtype() == DType::fp8_e4m3 || c.key_cache.dtype() == DType::fp8_e5m2;
  const bool integer = c.key_cache.dtype() == DType::u8 || c.key_cache.dtype() == DType::i8;
  if (integer) return integer_cache_value(c.quant, key, hs, block, h, t, d, v);
  return fp8 ? v * f.scale(c, key, h) : v;
}

/// K and V of one (sequence, KV head), gathered to dense [token][dim] rows.
struct GatheredKV {
  std::vector<double> k, v;
};
inline GatheredKV gather_sequence(const cases::DecodeCase& c, const CacheF64& f, std::int64_t seq,
                                  std::int64_t kv_head) {
  const std::int64_t L = c.spec.seq_lens[static_cast<std::size_t>(seq)], hs = c.spec.head_size;
  GatheredKV g{std::vector<double>(static_cast<std::size_t>(L * hs)),
               std::vector<double>(static_cast<std::size_t>(L * hs))};
  for (std::int64_t j = 0; j < L; ++j)
    for (std::int64_t d = 0; d < hs; ++d) {
      g.k[static_cast<std::size_t>(j * hs + d)] = gather(c, f, true, seq, j, kv_head, d);
      g.v[static_cast<std::size_t>(j * hs + d)] = gather(c, f, false, seq, j, kv_head, d);
    }
  return g;
}

/// out[seq][head][dim] in fp64 (row-major, num_seqs x num_heads x head_size). Per-KV-head fp8
/// scales, when given, replace the case's per-tensor ones.
inline std::vector<double> dense_decode_reference(const cases::DecodeCase& c,
                                                  std::vector<float> k_head_scales = {},
                                                  std::vector<float> v_head_scales = {}) {
  const auto& s = c.spec;
  const std::int64_t hs = s.head_size, G = s.num_heads / s.num_kv_heads;
  const double scale = s.scale ? static_cast<double>(static_cast<float>(*s.scale))
                               : static_cast<double>(static_cast<float>(1.0 / std::sqrt(double(hs))));
  const CacheF64 caches(c, std::move(k_head_scales), std::move(v_head_scales));
  std::vector<double> out(static_cast<std::size_t>(s.num_seqs * s.num_heads * hs), 0.0);
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const std::int64_t L = s.seq_lens[static_cast<std::size_t>(seq)];
    for (std::int64_t kvh = 0; kvh < s.num_kv_heads; ++kvh) {
      const GatheredKV kv = gather_sequence(c, caches, seq, kvh);
      for (std::int64_t h = kvh * G; h < (kvh + 1) * G; ++h) {
        std::vector<double> q(static_cast<std::size_t>(hs));
        for (std::int64_t d = 0; d < hs; ++d) q[static_cast<std::size_t>(d)] = c.query.at({seq, h, d});
        std::vector<double> logits(static_cast<std::size_t>(L));
        std::vector<bool> visible(static_cast<std::size_t>(L));
        for (std::int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < hs; ++d)
            dot += q[static_cast<std::size_t>(d)] * kv.k[static_cast<std::size_t>(j * hs + d)];
          double z = scale * dot;
          if (s.soft_cap > 0) z = s.soft_cap * std::tanh(z / s.soft_cap);
          if (s.alibi) z += c.alibi_slopes.at({h}) * static_cast<double>(j - L + 1);
          logits[static_cast<std::size_t>(j)] = z;
          visible[static_cast<std::size_t>(j)] = s.sliding_window == 0 || (L - 1 - j) < s.sliding_window;
        }
        double m = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < L; ++j)
          if (visible[static_cast<std::size_t>(j)]) m = std::max(m, logits[static_cast<std::size_t>(j)]);
        double denom = 0;
        std::vector<double> w(static_cast<std::size_t>(L), 0.0);
        for (std::int64_t j = 0; j < L; ++j)
          if (visible[static_cast<std::size_t>(j)])
            denom += (w[static_cast<std::size_t>(j)] = std::exp(logits[static_cast<std::size_t>(j)] - m));
        for (std::int64_t d = 0; d < hs; ++d) {
          double acc = 0;
          for (std::int64_t j = 0; j < L; ++j)
            if (w[static_cast<std::size_t>(j)] != 0)
              acc += w[static_cast<std::size_t>(j)] * kv.v[static_cast<std::size_t>(j * hs + d)];
          out[static_cast<std::size_t>((seq * s.num_heads + h) * hs + d)] = L > 0 ? acc / denom : 0.0;
        }
      }
    }
  }
  return out;
}

}  // namespace pao::test

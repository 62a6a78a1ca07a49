// Exact precision of a decode partition: K and V decoded to fp64, every operation in fp64.
// The result does not depend on partitioning beyond fp64 rounding (~1e-16 relative).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "decode_partition.hpp"
#include "kv_tile.hpp"
#include "simd.hpp"

namespace pao::detail {

void run_partition_exact(const DecodeProblem& p, const PartitionTask& task, PartitionResult<double> r) {
  const PagedKV& kv = p.kv;
  const std::int32_t G = p.queries_per_kv(), hs = p.head_size, bs = kv.block_size;
  const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(task.seq)];
  const std::int32_t query_pos = seq_len - 1;
  const std::int32_t n = task.token_end - task.token_begin;
  const AttentionScalars& sc = p.scalars;
  const double scale = sc.scale;

  // Tiles: K token-major [token][dim] (a dot product per token over contiguous dims); V as stored
  // by vLLM, dim-major [dim][token], accumulated elementwise into acc[g][dim][token] and summed
  // over tokens once at the end (fp64: the order of these sums is immaterial at 1e-12).
  thread_local std::vector<double> q, k_tile, v_tile, logits, acc;
  q.assign(static_cast<std::size_t>(G) * hs, 0.0);
  k_tile.resize(static_cast<std::size_t>(bs) * hs);
  v_tile.resize(static_cast<std::size_t>(hs) * bs);
  logits.resize(static_cast<std::size_t>(G) * n);
  constexpr std::int32_t kLanes = 8;
  const bool lanes_fit = hs % kLanes == 0 && bs % kLanes == 0;
  acc.assign(static_cast<std::size_t>(G) * hs * (lanes_fit ? kLanes : bs), 0.0);
  for (std::int32_t g = 0; g < G; ++g)
    for (std::int32_t d = 0; d < hs; ++d)
      q[static_cast<std::size_t>(g) * hs + d] = p.query.at({task.seq, task.kv_head * G + g, d});


  // Pass 1: logits.
  for_each_block(kv, task, CacheSide::key, [&](std::int32_t, std::int32_t t0, std::int32_t nt, std::int32_t block) {
    load_tile_exact(kv.key_data, kv.key_layout, kv.cache_dtype, kv.k_scales[task.kv_head], block,
                    task.kv_head, nt, bs, hs, k_tile.data(), {hs, 1});
    for (std::int32_t g = 0; g < G; ++g) {
      const double* qg = q.data() + static_cast<std::size_t>(g) * hs;
      const std::int32_t head = task.kv_head * G + g;
      const double slope = sc.alibi_slopes.empty() ? 0.0 : sc.alibi_slopes[static_cast<std::size_t>(head)];
      for (std::int32_t t = 0; t < nt; ++t) {
        const double* k = k_tile.data() + static_cast<std::size_t>(t) * hs;
        double dot = 0.0;
        if (lanes_fit) {  // eight-lane partial sums, two independent chains
          f64x8 p0 = {}, p1 = {};
          std::int32_t d = 0;
          for (; d + 2 * kLanes <= hs; d += 2 * kLanes) {
            p0 = fma_vec(load_vec<f64x8>(qg + d), load_vec<f64x8>(k + d), p0);
            p1 = fma_vec(load_vec<f64x8>(qg + d + kLanes), load_vec<f64x8>(k + d + kLanes), p1);
          }
          if (d < hs) p0 = fma_vec(load_vec<f64x8>(qg + d), load_vec<f64x8>(k + d), p0);
          const f64x8 part = p0 + p1;
          for (std::int32_t i = 0; i < kLanes; ++i) dot += part[i];
        } else {
          for (std::int32_t d = 0; d < hs; ++d) dot = std::fma(qg[d], k[d], dot);
        }
        const std::int32_t token = t0 + t;
        double s = scale * dot;
        if (sc.soft_cap > 0) s = sc.soft_cap * std::tanh(s / sc.soft_cap);
        s += slope * (token - seq_len + 1);
        if (!in_window(query_pos, token, sc.sliding_window)) s = -std::numeric_limits<double>::infinity();
        logits[static_cast<std::size_t>(g) * n + (token - task.token_begin)] = s;
      }
    }
  });

  // Softmax statistics.
  for (std::int32_t g = 0; g < G; ++g) {
    double* lg = logits.data() + static_cast<std::size_t>(g) * n;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int32_t i = 0; i < n; ++i) m = std::max(m, lg[i]);
    double l = 0.0;
    if (m != -std::numeric_limits<double>::infinity())
      for (std::int32_t i = 0; i < n; ++i) l += (lg[i] = std::exp(lg[i] - m));
    else
      std::fill(lg, lg + n, 0.0);
    r.max_logit[g] = m;
    r.exp_sum[g] = l;
  }

  // Pass 2: weighted sum of V. Slots past the sequence's end get weight 0 and value 0, so NaN
  // poison there cannot reach the sums.
  thread_local std::vector<double> weights;
  weights.resize(static_cast<std::size_t>(bs));
  for_each_block(kv, task, CacheSide::value, [&](std::int32_t, std::int32_t t0, std::int32_t nt, std::int32_t block) {
    load_tile_exact(kv.value_data, kv.value_layout, kv.cache_dtype, kv.v_scales[task.kv_head], block,
                    task.kv_head, nt, bs, hs, v_tile.data(), {1, bs});
    if (nt < bs)
      for (std::int32_t d = 0; d < hs; ++d) std::fill(v_tile.begin() + d * bs + nt, v_tile.begin() + (d + 1) * bs, 0.0);
    for (std::int32_t g = 0; g < G; ++g) {
      const double* e = logits.data() + static_cast<std::size_t>(g) * n + (t0 - task.token_begin);
      std::copy(e, e + nt, weights.begin());
      std::fill(weights.begin() + nt, weights.end(), 0.0);
      if (lanes_fit) {  // acc[g][d] holds 8 lanes: token t adds into lane t % 8
        double* __restrict a = acc.data() + static_cast<std::size_t>(g) * hs * kLanes;
        const double* __restrict v = v_tile.data();
        const double* __restrict w = weights.data();
        for (std::int32_t d = 0; d < hs; d += 4) {  // four rows at once: independent chains
          f64x8 s0 = load_vec<f64x8>(a + (d + 0) * kLanes), s1 = load_vec<f64x8>(a + (d + 1) * kLanes);
          f64x8 s2 = load_vec<f64x8>(a + (d + 2) * kLanes), s3 = load_vec<f64x8>(a + (d + 3) * kLanes);
          for (std::int32_t t = 0; t < bs; t += kLanes) {
            const f64x8 wt = load_vec<f64x8>(w + t);
            s0 = fma_vec(wt, load_vec<f64x8>(v + (d + 0) * bs + t), s0);
            s1 = fma_vec(wt, load_vec<f64x8>(v + (d + 1) * bs + t), s1);
            s2 = fma_vec(wt, load_vec<f64x8>(v + (d + 2) * bs + t), s2);
            s3 = fma_vec(wt, load_vec<f64x8>(v + (d + 3) * bs + t), s3);
          }
          store_vec(a + (d + 0) * kLanes, s0);
          store_vec(a + (d + 1) * kLanes, s1);
          store_vec(a + (d + 2) * kLanes, s2);
          store_vec(a + (d + 3) * kLanes, s3);
        }
      } else {
        double* a = acc.data() + static_cast<std::size_t>(g) * hs * bs;
        for (std::int32_t d = 0; d < hs; ++d) {
          const double* v = v_tile.data() + static_cast<std::size_t>(d) * bs;
          double* ad = a + static_cast<std::size_t>(d) * bs;
          for (std::int32_t t = 0; t < bs; ++t) ad[t] = std::fma(weights[static_cast<std::size_t>(t)], v[t], ad[t]);
        }
      }
    }
  });
  for (std::int32_t g = 0; g < G; ++g) {
    const double l = r.exp_sum[g];
    const std::int32_t width = lanes_fit ? kLanes : bs;
    const double* a = acc.data() + static_cast<std::size_t>(g) * hs * width;
    double* out = r.out + static_cast<std::size_t>(g) * hs;
    for (std::int32_t d = 0; d < hs; ++d) {
      double sum = 0.0;
      for (std::int32_t t = 0; t < width; ++t) sum += a[static_cast<std::size_t>(d) * width + t];
      out[d] = l > 0 ? sum / l : 0.0;
    }
  }
}

}  // namespace pao::detail

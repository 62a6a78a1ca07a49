// Exact precision of a decode partition: K and V decoded to fp64, every operation in fp64.
// The result does not depend on partitioning beyond fp64 rounding (~1e-16 relative).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "kernels/common/view_row.hpp"
#include "kernels/decode/decode_exact_fused.hpp"
#include "kernels/decode/decode_partition.hpp"
#include "kernels/prefix/kv_tile.hpp"
#include "numerics/exp_f64.hpp"
#include "simd/vec.hpp"

namespace pao::detail {

namespace {

/// q · k over hs dims: two eight-lane fma chains (even and odd runs of 8 dims), added
/// lane-wise, the lanes summed left to right from 0 (decode_exact_fused.cpp does the same).
double dot_product(const double* q, const double* k, std::int32_t hs) {
  constexpr std::int32_t kLanes = 8;
  double dot = 0.0;
  if (hs % kLanes != 0) {
    for (std::int32_t d = 0; d < hs; ++d) dot = std::fma(q[d], k[d], dot);
    return dot;
  }
  f64x8 p0 = {}, p1 = {};
  std::int32_t d = 0;
  for (; d + 2 * kLanes <= hs; d += 2 * kLanes) {
    p0 = fma_vec(load_vec<f64x8>(q + d), load_vec<f64x8>(k + d), p0);
    p1 = fma_vec(load_vec<f64x8>(q + d + kLanes), load_vec<f64x8>(k + d + kLanes), p1);
  }
  if (d < hs) p0 = fma_vec(load_vec<f64x8>(q + d), load_vec<f64x8>(k + d), p0);
  const f64x8 part = p0 + p1;
  for (std::int32_t i = 0; i < kLanes; ++i) dot += part[i];
  return dot;
}

}  // namespace

void run_partition_exact(const DecodeProblem& p, const PartitionTask& task, PartitionResult<double> r) {
  const PagedKV& kv = p.kv;
  const std::int32_t G = p.queries_per_kv(), hs = p.head_size, bs = kv.block_size;
  const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(task.seq)];
  const std::int32_t n = task.token_end - task.token_begin;
  const AttentionScalars& sc = p.scalars;

  // Tiles: K token-major [token][dim] (a dot product per token over contiguous dims); V as stored
  // by vLLM, dim-major [dim][token], accumulated elementwise into acc[g][dim][token] and summed
  // over tokens once at the end (fp64: the order of these sums is immaterial at 1e-12).
  thread_local std::vector<double> q, k_tile, v_tile, logits, acc;
  q.resize(static_cast<std::size_t>(G) * hs);
  k_tile.resize(static_cast<std::size_t>(bs) * hs);
  v_tile.resize(static_cast<std::size_t>(hs) * bs);
  logits.resize(static_cast<std::size_t>(G) * n);
  constexpr std::int32_t kLanes = 8;
  const bool lanes_fit = hs % kLanes == 0 && bs % kLanes == 0;
  // Heads' accumulators are padded by 1 KiB: with rows of 64 bytes, a load of one head's row then
  // lies a multiple of 4 KiB from a recent store of another head's only 16 or more rows apart, so
  // it does not wait on it (4K aliasing).
  const std::size_t acc_stride = static_cast<std::size_t>(hs) * (lanes_fit ? kLanes : bs) + 128;
  for (std::int32_t g = 0; g < G; ++g)
    read_row(p.query, task.seq, task.kv_head * G + g, hs, q.data() + static_cast<std::size_t>(g) * hs);

  // Whole blocks of the common layouts take the fused loops; the rest takes the general ones.
  std::optional<FusedExactBlocks> fused;
  if (fused_exact_supported(p)) fused.emplace(p, q.data(), G);
  // The fused P·V sets every accumulator it owns (rows [0, hs) of each head); otherwise they start at 0.
  if (fused)
    acc.resize(static_cast<std::size_t>(G) * acc_stride);
  else
    acc.assign(static_cast<std::size_t>(G) * acc_stride, 0.0);
  const std::size_t es = dtype_size(kv.cache_dtype);

  // Pass 1: logits.
  for_each_block(kv, task, CacheSide::key,
                 [&](std::int32_t, std::int32_t t0, std::int32_t nt, std::int32_t block) {
                   double* lg0 = logits.data() + (t0 - task.token_begin);
                   if (fused && nt == bs) {
                     fused->qk(kv.key_data + kv.key_layout.offset(block, task.kv_head, 0, 0) * es, lg0, n);
                   } else {
                     load_tile_exact(kv.key_data, kv.key_layout, kv.cache_dtype, kv.k_scales[task.kv_head],
                                     block, task.kv_head, nt, bs, hs, k_tile.data(), {hs, 1},
                                     kv.integer_dequant(CacheTensor::key));
                     for (std::int32_t g = 0; g < G; ++g)
                       for (std::int32_t t = 0; t < nt; ++t)
                         lg0[static_cast<std::size_t>(g) * n + t] =
                             dot_product(q.data() + static_cast<std::size_t>(g) * hs,
                                         k_tile.data() + static_cast<std::size_t>(t) * hs, hs);
                   }
                   // Scale, soft-cap, ALiBi, window: the decode kernels' one definition, in fp64.
                   for (std::int32_t g = 0; g < G; ++g) {
                     double* lg = lg0 + static_cast<std::size_t>(g) * n;
                     const LogitParams lp = logit_params(sc, task.kv_head * G + g);
                     for (std::int32_t t = 0; t < nt; ++t)
                       lg[t] = decode_logit_exact(lg[t], lp, t0 + t, seq_len);
                   }
                 });

  // Softmax statistics.
  for (std::int32_t g = 0; g < G; ++g) {
    double* lg = logits.data() + static_cast<std::size_t>(g) * n;
    const double m = max_in_8_lanes(lg, n);
    double l = 0.0;
    if (m != -std::numeric_limits<double>::infinity()) {
      for (std::int32_t i = 0; i < n; ++i) lg[i] -= m;
      exp_f64_n(lg, lg, n);
      l = sum_in_8_lanes(lg, n);
    } else {
      std::fill(lg, lg + n, 0.0);
    }
    r.max_logit[g] = m;
    r.exp_sum[g] = l;
  }

  // Pass 2: weighted sum of V. Slots past the sequence's end get weight 0 and value 0, so NaN
  // poison there cannot reach the sums.
  // The fused loops take the partition's whole blocks; the general ones the rest (a last,
  // partial block).
  PartitionTask rest = task;
  if (fused) {
    const std::int32_t whole = n / bs;
    fused->pv(task, whole, logits.data(), n, acc.data(), acc_stride);
    rest.token_begin += whole * bs;
  }
  thread_local std::vector<double> weights;
  weights.resize(static_cast<std::size_t>(bs));
  for_each_block(
      kv, rest, CacheSide::value, [&](std::int32_t, std::int32_t t0, std::int32_t nt, std::int32_t block) {
        load_tile_exact(kv.value_data, kv.value_layout, kv.cache_dtype, kv.v_scales[task.kv_head], block,
                        task.kv_head, nt, bs, hs, v_tile.data(), {1, bs},
                        kv.integer_dequant(CacheTensor::value));
        if (nt < bs)
          for (std::int32_t d = 0; d < hs; ++d)
            std::fill(v_tile.begin() + d * bs + nt, v_tile.begin() + (d + 1) * bs, 0.0);
        for (std::int32_t g = 0; g < G; ++g) {
          const double* e = logits.data() + static_cast<std::size_t>(g) * n + (t0 - task.token_begin);
          std::copy(e, e + nt, weights.begin());
          std::fill(weights.begin() + nt, weights.end(), 0.0);
          if (lanes_fit) {  // acc[g][d] holds 8 lanes: token t adds into lane t % 8
            double* __restrict a = acc.data() + static_cast<std::size_t>(g) * acc_stride;
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
            double* a = acc.data() + static_cast<std::size_t>(g) * acc_stride;
            for (std::int32_t d = 0; d < hs; ++d) {
              const double* v = v_tile.data() + static_cast<std::size_t>(d) * bs;
              double* ad = a + static_cast<std::size_t>(d) * bs;
              for (std::int32_t t = 0; t < bs; ++t)
                ad[t] = std::fma(weights[static_cast<std::size_t>(t)], v[t], ad[t]);
            }
          }
        }
      });
  for (std::int32_t g = 0; g < G; ++g) {
    const double l = r.exp_sum[g];
    const std::int32_t width = lanes_fit ? kLanes : bs;
    const double* a = acc.data() + static_cast<std::size_t>(g) * acc_stride;
    double* out = r.out + static_cast<std::size_t>(g) * hs;
    for (std::int32_t d = 0; d < hs; ++d) {
      double sum = 0.0;
      for (std::int32_t t = 0; t < width; ++t) sum += a[static_cast<std::size_t>(d) * width + t];
      out[d] = l > 0 ? sum / l : 0.0;
    }
  }
}

}  // namespace pao::detail

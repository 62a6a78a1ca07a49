// Kernel precision of a decode partition: the fp32 arithmetic of vLLM's paged-attention CTA
// (csrc/attention/attention_kernels.cuh), operation by operation. Where the GPU reduces across
// threads, this file applies the same tree (pao/numerics/kernel_math.hpp); where it uses an approximate
// device function, it uses pao's shared kernel_exp. docs/numerics.md lists every rounding point.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "kernels/common/view_row.hpp"
#include "kernels/decode/decode_kernel_fused.hpp"
#include "kernels/decode/decode_partition.hpp"
#include "kernels/prefix/kv_tile.hpp"
#include "kernels/prefix/prefix_tile_math.hpp"  // kernel_exp_n
#include "pao/core/error.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kernel_math.hpp"
#include "simd/vec.hpp"

namespace pao::detail {

namespace {

/// The kernel's qk_max: fmaxf over the visible logits (not -inf) from -FLT_MAX, so NaN never
/// wins; any_visible: some logit is not -inf. Sixteen lanes, then the lanes; fmaxf's order only
/// shows in the sign of a zero maximum, which the sequential loop then decides.
float visible_max(const float* lg, std::int32_t n, bool& any_visible) {
  using i32x16 = std::int32_t __attribute__((vector_size(64)));
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  f32x16 lanes = splat<f32x16>(-FLT_MAX);
  i32x16 visible = {};  // lane j: -1 once one of its logits is not -inf (NaN included)
  std::int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const f32x16 v = load_vec<f32x16>(lg + i);
    lanes = v > lanes ? v : lanes;
    visible |= v != splat<f32x16>(kNegInf);
  }
  float m = -FLT_MAX;
  any_visible = false;
  for (std::int32_t j = 0; j < 16; ++j) {
    m = lanes[j] > m ? lanes[j] : m;
    any_visible = any_visible || visible[j] != 0;
  }
  for (; i < n; ++i) {
    m = lg[i] > m ? lg[i] : m;
    any_visible = any_visible || lg[i] != kNegInf;
  }
  if (m == 0.0f) {  // +0 or -0: the first zero that fmaxf keeps
    m = -FLT_MAX;
    for (std::int32_t k = 0; k < n; ++k)
      if (lg[k] != kNegInf) m = std::fmax(m, lg[k]);
  }
  return m;
}

/// Q·K of one head against one block, for all tokens at once (each token's arithmetic is the
/// same tree, so the loops run across tokens). k_tile is [dim][token] with `bs` columns.
/// Per token: accumulator a (= dim % dims_per_step) starts with a product and adds the later
/// dims of its class with fma (vLLM's qk_dot_); each thread sums its vec_size accumulators left
/// to right; the thread group combines by xor butterfly.
void qk_block(const DecodeGeometry& g, const float* q, const float* k_tile, std::int32_t hs, std::int32_t bs,
              std::int32_t nt, float* acc /*[dims_per_step][bs]*/, float* out) {
  const std::int32_t A = g.dims_per_step;
  // Accumulator a for a run of tokens, kept in a register across its dims (vector lanes are
  // tokens; each lane's chain is the scalar one).
  auto accumulate = [&](auto lanes_tag, std::int32_t t0) {
    using V = decltype(lanes_tag);
    for (std::int32_t a = 0; a < A; ++a) {
      V sum = splat<V>(q[a]) * load_vec<V>(k_tile + static_cast<std::size_t>(a) * bs + t0);
      for (std::int32_t d = a + A; d < hs; d += A)
        sum = fma_vec(splat<V>(q[d]), load_vec<V>(k_tile + static_cast<std::size_t>(d) * bs + t0), sum);
      store_vec(acc + static_cast<std::size_t>(a) * bs + t0, sum);
    }
  };
  std::int32_t t0 = 0;
  for (; t0 + 16 <= nt; t0 += 16) accumulate(f32x16{}, t0);
  for (; t0 + 8 <= nt; t0 += 8) accumulate(f32x8{}, t0);
  for (std::int32_t a = 0; a < A && t0 < nt; ++a) {
    float* acc_a = acc + static_cast<std::size_t>(a) * bs;
    for (std::int32_t t = t0; t < nt; ++t) acc_a[t] = q[a] * k_tile[static_cast<std::size_t>(a) * bs + t];
    for (std::int32_t d = a + A; d < hs; d += A)
      for (std::int32_t t = t0; t < nt; ++t)
        acc_a[t] = std::fma(q[d], k_tile[static_cast<std::size_t>(d) * bs + t], acc_a[t]);
  }
  // Lane sums: thread o's accumulators o*vec_size + [0, vec_size), left to right, in place into
  // row o*vec_size.
  const std::int32_t vs = g.vec_size;
  for (std::int32_t o = 0; o < g.thread_group_size; ++o) {
    float* s = acc + static_cast<std::size_t>(o) * vs * bs;
    for (std::int32_t l = 1; l < vs; ++l) {
      const float* x = acc + static_cast<std::size_t>(o * vs + l) * bs;
      for (std::int32_t t = 0; t < nt; ++t) s[t] = s[t] + x[t];
    }
  }
  // Thread-group butterfly over the rows o*vec_size.
  for (std::int32_t mask = g.thread_group_size / 2; mask >= 1; mask /= 2) {
    for (std::int32_t i = 0; i < mask; ++i) {
      float* dst = acc + static_cast<std::size_t>(i) * vs * bs;
      const float* src = acc + static_cast<std::size_t>(i + mask) * vs * bs;
      for (std::int32_t t = 0; t < nt; ++t) dst[t] = dst[t] + src[t];
    }
  }
  std::copy(acc, acc + nt, out);
}

/// dot(logits_vec, v_vec) of vLLM for one vector of v_vec_size tokens, for every dim at once.
/// p: the probabilities (already rounded to the activation dtype); v: [token][dim] rows.
///   f32:  products in fp32, summed left to right
///   bf16: products rounded to bf16 (__hmul2), pairs summed in fp32, pair sums left to right
///   f16:  products rounded to f16 (mul.f16x2); even and odd tokens summed separately in f16
///         (add.f16x2), then float(even) + float(odd)
void pv_dot(DType dtype, const float* p, const float* v, std::int32_t vv, std::int32_t hs, float* dot,
            float* tmp /*[2][hs]*/) {
  if (dtype == DType::f32) {
    for (std::int32_t d = 0; d < hs; ++d) dot[d] = p[0] * v[d];
    for (std::int32_t t = 1; t < vv; ++t) {
      const float* vt = v + static_cast<std::size_t>(t) * hs;
      for (std::int32_t d = 0; d < hs; ++d) dot[d] = dot[d] + p[t] * vt[d];
    }
    return;
  }
  float* even = tmp;
  float* odd = tmp + hs;
  auto products = [&](std::int32_t t, float* dst) {
    const float* vt = v + static_cast<std::size_t>(t) * hs;
    for (std::int32_t d = 0; d < hs; ++d) dst[d] = p[t] * vt[d];
    round_to_activation(dtype, dst, static_cast<std::size_t>(hs));
  };
  if (dtype == DType::bf16) {
    for (std::int32_t t = 0; t < vv; t += 2) {
      products(t, even);
      products(t + 1, odd);
      for (std::int32_t d = 0; d < hs; ++d) {
        const float pair = even[d] + odd[d];
        dot[d] = t == 0 ? pair : dot[d] + pair;
      }
    }
    return;
  }
  // f16. Sums of two halves are exact in fp32 to well within the double-rounding bound
  // (24 >= 2 * 11 + 2), so rounding the fp32 sum to f16 equals a native f16 add.
  products(0, even);
  products(1, odd);
  for (std::int32_t t = 2; t < vv; t += 2) {
    products(t, dot);
    for (std::int32_t d = 0; d < hs; ++d) even[d] = even[d] + dot[d];
    round_to_activation(dtype, even, static_cast<std::size_t>(hs));
    products(t + 1, dot);
    for (std::int32_t d = 0; d < hs; ++d) odd[d] = odd[d] + dot[d];
    round_to_activation(dtype, odd, static_cast<std::size_t>(hs));
  }
  for (std::int32_t d = 0; d < hs; ++d) dot[d] = even[d] + odd[d];
}

}  // namespace

void run_partition_kernel(const DecodeProblem& p, const DecodeGeometry& geo, const PartitionTask& task,
                          PartitionResult<float> r) {
  const PagedKV& kv = p.kv;
  const std::int32_t G = p.queries_per_kv(), hs = p.head_size, bs = kv.block_size;
  const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(task.seq)];
  const std::int32_t n = task.token_end - task.token_begin;
  const AttentionScalars& sc = p.scalars;
  const std::int32_t NW = geo.num_warps, NT = geo.num_threads, W = geo.warp_size;
  const std::int32_t VV = geo.v_vec_size, NVR = geo.v_vecs_per_row;
  const float neg_inf = -std::numeric_limits<float>::infinity();

  thread_local std::vector<float> q, k_tile, v_tile, logits, qk_acc, pv_acc, pv_tmp, partial;
  q.resize(static_cast<std::size_t>(G) * hs);
  k_tile.resize(static_cast<std::size_t>(hs) * bs);  // [dim][token]
  v_tile.resize(static_cast<std::size_t>(bs) * hs);  // [token][dim]
  logits.resize(static_cast<std::size_t>(G) * n);
  qk_acc.resize(static_cast<std::size_t>(geo.dims_per_step) * bs);
  // P·V accumulator rows [G][NW][NVR], each row padded by 64 bytes: rows a multiple of 4 KiB apart
  // would make each head's loads wait on the previous head's stores (4K aliasing).
  const std::size_t row_stride = static_cast<std::size_t>(hs) + 16;
  auto acc_row = [&](std::int32_t g, std::int32_t w, std::int32_t pv) {
    return pv_acc.data() + ((static_cast<std::size_t>(g) * NW + w) * NVR + pv) * row_stride;
  };
  pv_acc.assign(static_cast<std::size_t>(G) * NW * NVR * row_stride, 0.0f);
  pv_tmp.resize(static_cast<std::size_t>(3) * hs);
  partial.resize(static_cast<std::size_t>(NT));
  for (std::int32_t g = 0; g < G; ++g)
    read_row(p.query, task.seq, task.kv_head * G + g, hs, q.data() + static_cast<std::size_t>(g) * hs);

  const std::int32_t first_block = task.token_begin / bs;
  const float k_scale = kv.k_scales[static_cast<std::size_t>(task.kv_head)];
  const float v_scale = kv.v_scales[static_cast<std::size_t>(task.kv_head)];
  const bool k_through_half = fp8_dequant_through_half(p.dtype, geo.vec_size);
  const bool v_through_half = fp8_dequant_through_half(p.dtype, geo.v_vec_size);
  // Whole blocks of the common layouts take the fused loops; the rest takes the general ones.
  std::optional<FusedDecodeBlocks> fused;
  if (fused_decode_supported(p, geo)) fused.emplace(p, geo, q.data(), G);
  const std::size_t es = dtype_size(kv.cache_dtype);

  // Q·K. Masked tokens (past seq_len: never in [token_begin, token_end); outside the sliding
  // window: -inf) take no part in the max.
  for_each_block(kv, task, CacheSide::key,
                 [&](std::int32_t, std::int32_t t0, std::int32_t nt, std::int32_t block) {
                   const bool whole = fused && nt == bs;
                   if (whole)
                     fused->qk(kv.key_data + kv.key_layout.offset(block, task.kv_head, 0, 0) * es,
                               logits.data() + (t0 - task.token_begin), n);
                   else
                     load_tile_kernel(kv.key_data, kv.key_layout, kv.cache_dtype, k_scale, p.dtype, block,
                                      task.kv_head, nt, bs, hs, k_tile.data(), {1, bs}, k_through_half,
                                      kv.integer_dequant(CacheTensor::key));
                   for (std::int32_t g = 0; g < G; ++g) {
                     float* lg = logits.data() + static_cast<std::size_t>(g) * n + (t0 - task.token_begin);
                     if (!whole)
                       qk_block(geo, q.data() + static_cast<std::size_t>(g) * hs, k_tile.data(), hs, bs, nt,
                                qk_acc.data(), lg);
                     // Scale, soft-cap, ALiBi, window: the decode kernels' one definition.
                     const LogitParams lp = logit_params(sc, task.kv_head * G + g);
                     for (std::int32_t t = 0; t < nt; ++t) lg[t] = decode_logit(lg[t], lp, t0 + t, seq_len);
                   }
                 });

  // Softmax: block max, exp, per-thread partial sums (thread i % NT owns token i), block_sum.
  thread_local std::vector<float> lanes;
  lanes.resize(static_cast<std::size_t>(std::max(W, NW)));
  for (std::int32_t g = 0; g < G; ++g) {
    float* lg = logits.data() + static_cast<std::size_t>(g) * n;
    bool any_visible = false;
    const float qk_max = visible_max(lg, n, any_visible);
    for (std::int32_t i = 0; i < n; ++i) lg[i] = lg[i] - qk_max;
    kernel_exp_n(lg, lg, n);
    // Thread t sums tokens t, t + NT, ...: a row of NT tokens at a time, lanes = threads.
    std::fill(partial.begin(), partial.end(), 0.0f);
    for (std::int32_t row = 0; row < n; row += NT) {
      const std::int32_t m = std::min(NT, n - row);
      for (std::int32_t t = 0; t < m; ++t) partial[static_cast<std::size_t>(t)] += lg[row + t];
    }
    thread_local std::vector<float> warp_sums;
    warp_sums.resize(static_cast<std::size_t>(NW));
    for (std::int32_t w = 0; w < NW; ++w) {
      std::copy(partial.begin() + w * W, partial.begin() + (w + 1) * W, lanes.begin());
      warp_sums[static_cast<std::size_t>(w)] = butterfly_sum(lanes.data(), W);
    }
    const float exp_sum = butterfly_sum(warp_sums.data(), NW);
    const float inv_sum = 1.0f / (exp_sum + 1e-6f);
    for (std::int32_t i = 0; i < n; ++i) lg[i] = lg[i] * inv_sum;
    round_to_activation(p.dtype, lg, static_cast<std::size_t>(n));  // from_float(logits_vec)
    r.max_logit[g] = any_visible ? qk_max : neg_inf;
    r.exp_sum[g] = exp_sum;
  }

  // P·V: warp w takes the partition's blocks w, w + NW, ...; lane vector pv covers tokens
  // pv*VV + [0, VV) of a block. Tokens past seq_len have p = 0 and V zeroed (vLLM zeroes the
  // last block's tail so that NaN poison cannot leak).
  thread_local std::vector<float> p_vec;
  p_vec.resize(static_cast<std::size_t>(VV));
  for_each_block(
      kv, task, CacheSide::value, [&](std::int32_t b, std::int32_t t0, std::int32_t nt, std::int32_t block) {
        const std::int32_t w = (b - first_block) % NW;
        if (fused && nt == bs) {
          fused->load_value(kv.value_data + kv.value_layout.offset(block, task.kv_head, 0, 0) * es);
          for (std::int32_t g = 0; g < G; ++g) {
            const float* lg = logits.data() + static_cast<std::size_t>(g) * n + (t0 - task.token_begin);
            for (std::int32_t pv = 0; pv < NVR; ++pv) fused->pv(lg + pv * VV, pv * VV, acc_row(g, w, pv));
          }
          return;
        }
        load_tile_kernel(kv.value_data, kv.value_layout, kv.cache_dtype, v_scale, p.dtype, block,
                         task.kv_head, nt, bs, hs, v_tile.data(), {hs, 1}, v_through_half,
                         kv.integer_dequant(CacheTensor::value));
        std::fill(v_tile.begin() + static_cast<std::ptrdiff_t>(nt) * hs, v_tile.end(), 0.0f);
        for (std::int32_t g = 0; g < G; ++g) {
          const float* lg = logits.data() + static_cast<std::size_t>(g) * n;
          for (std::int32_t pv = 0; pv < NVR; ++pv) {
            for (std::int32_t j = 0; j < VV; ++j) {
              const std::int32_t token = t0 + pv * VV + j;
              p_vec[static_cast<std::size_t>(j)] =
                  token < task.token_end ? lg[token - task.token_begin] : 0.0f;
            }
            float* dot = pv_tmp.data() + 2 * static_cast<std::size_t>(hs);
            pv_dot(p.dtype, p_vec.data(), v_tile.data() + static_cast<std::size_t>(pv) * VV * hs, VV, hs, dot,
                   pv_tmp.data());
            float* acc = acc_row(g, w, pv);
            for (std::int32_t d = 0; d < hs; ++d) acc[d] = acc[d] + dot[d];
          }
        }
      });
  // Reduce: butterfly over the NVR lanes of a row, then the cross-warp halving tree (which is
  // the same tree as a butterfly over warps); butterfly_sum's trees, on whole rows of dims.
  auto add_row = [&](float* dst, const float* src) {
    for (std::int32_t d = 0; d < hs; ++d) dst[d] = dst[d] + src[d];
  };
  for (std::int32_t g = 0; g < G; ++g) {
    auto row = [&](std::int32_t w, std::int32_t pv) { return acc_row(g, w, pv); };
    for (std::int32_t w = 0; w < NW; ++w)
      for (std::int32_t mask = NVR / 2; mask >= 1; mask /= 2)
        for (std::int32_t i = 0; i < mask; ++i) add_row(row(w, i), row(w, i + mask));
    for (std::int32_t mask = NW / 2; mask >= 1; mask /= 2)
      for (std::int32_t i = 0; i < mask; ++i) add_row(row(i, 0), row(i + mask, 0));
    std::copy(row(0, 0), row(0, 0) + hs, r.out + static_cast<std::size_t>(g) * hs);
  }
}

}  // namespace pao::detail

// The CUDA prefix (chunked-prefill) kernel: vLLM's context_attention_fwd CTA computing pao's
// kernel precision of docs/prefix.md ("Kernel precision, step by step") bit for bit. Each row's
// arithmetic is the sequential scalar definition (tests/support/prefix_kernel_spec.hpp); the CTA
// only spreads independent chains over threads:
//   Q·K   one thread per (row, key): dot = q[0]·k[0], then fma over d = 1 .. hs-1 in order;
//   softmax, l, m, alpha  one thread per row, keys in token order;
//   P·V   one thread per (row, dim): acc · alpha, then fma over the keys with p' != 0 in order.
// The CTA executes the plan's tile list (uploaded by the launcher). Rows go 32 per pass; a pass
// walks every tile, skipping tiles no row of the pass sees (an exact no-op by docs/prefix.md).
// Arithmetic is spelled out (__fmul_rn, __fadd_rn, __fmaf_rn, __fdiv_rn) and the targets build
// with --fmad=false, as for the decode kernels (paged_attention_decode.cuh).
#pragma once

#include <cstdint>

#include "kernels/paged_attention_decode.cuh"  // Elem, to_float, from_float, round_to, cache_value
#include "kernels/prefix_kernel_args.hpp"
#include "pao/cuda/prefix_launch.hpp"
#include "pao/cuda/prefix_params.hpp"
#include "pao/numerics/kernel_math.hpp"

namespace pao::cuda::detail {

template <int HS, DType Q, DType C>
__global__ void __launch_bounds__(kPrefixThreads) prefix_attention_kernel(const PrefixKernelArgs args) {
  using QElem = typename Elem<Q>::type;
  using CElem = typename Elem<C>::type;
  constexpr int NT = kPrefixThreads, RP = kPrefixRowsPerPass;
  constexpr int LD = HS + 1;  // padded row stride of the K/V tile and the queries: no bank conflicts
  static_assert((RP * HS) % NT == 0, "P·V gives every thread the same number of (row, dim) pairs");
  constexpr int ACC = RP * HS / NT;
  constexpr float kNegInf = -__builtin_huge_valf();

  const PrefixParams& p = args.p;
  const int seq = static_cast<int>(blockIdx.x);
  const int head = static_cast<int>(blockIdx.y);
  const std::int64_t linear =
      (static_cast<std::int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const PrefixDeviceCta cta = args.ctas[linear];
  if (cta.query_end <= cta.query_begin) return;  // rows past the sequence's query: nothing to store
  const int tid = static_cast<int>(threadIdx.x);
  const int W = args.max_tile_width;
  const int kv_head = p.kv_head_of(head);

  float* const shared = dynamic_shared_memory();
  float* const kv_s = shared;        // [W][LD]: K, then V, of the current tile
  float* const z_s = kv_s + W * LD;  // [RP][W]: logits, then rounded probabilities
  float* const q_s = z_s + RP * W;   // [RP][LD]
  float* const m_s = q_s + RP * LD;  // [RP]
  float* const l_s = m_s + RP;       // [RP]
  float* const alpha_s = l_s + RP;   // [RP]

  constexpr bool kInteger = C == DType::u8 || C == DType::i8;
  constexpr bool kFp8 = C != Q && !kInteger;
  const float k_scale = kFp8 ? (p.k_head_scales ? p.k_head_scales[kv_head] : p.k_scale) : 1.0f;
  const float v_scale = kFp8 ? (p.v_head_scales ? p.v_head_scales[kv_head] : p.v_scale) : 1.0f;
  const LogitParams logits = logit_params(p, head);
  const std::int32_t* const table = p.block_tables + seq * p.block_table_stride;
  const QElem* const query = static_cast<const QElem*>(p.query);
  const QElem* const key = static_cast<const QElem*>(p.key);
  const QElem* const value = static_cast<const QElem*>(p.value);
  const CElem* const key_cache = static_cast<const CElem*>(p.key_cache);
  const CElem* const value_cache = static_cast<const CElem*>(p.value_cache);

  /// Keys [0, nk) of a tile into kv_s, as the kernel holds them (docs/prefix.md, "Values").
  const auto load_tile = [&](const PrefixDeviceTile& tile, bool is_key) {
    const int nk = tile.num_keys;
    for (int e = tid; e < nk * HS; e += NT) {
      const int j = e / HS, d = e % HS;
      float v;
      if (tile.kind == 0 || p.new_kv_from_cache) {  // the cache, through the block table
        const int pos = (tile.kind == 0 ? 0 : cta.ctx_len) + tile.key_begin + j;
        const std::int64_t block = table[pos / p.block_size];
        const int slot = pos % p.block_size;
        if constexpr (kInteger)
          v = is_key ? integer_cache_value<Q>(
                           to_float<C>(key_cache[p.key_layout.offset(block, kv_head, slot, d)]), p.key_quant,
                           block, kv_head, slot, d)
                     : integer_cache_value<Q>(
                           to_float<C>(value_cache[p.value_layout.offset(block, kv_head, slot, d)]),
                           p.value_quant, block, kv_head, slot, d);
        else
          v = is_key
                  ? cache_value<Q, C>(key_cache[p.key_layout.offset(block, kv_head, slot, d)], k_scale)
                  : cache_value<Q, C>(value_cache[p.value_layout.offset(block, kv_head, slot, d)], v_scale);
      } else {  // the new tokens, from key / value
        const std::int64_t token = cta.token_offset + tile.key_begin + j;
        v = is_key ? to_float<Q>(
                         key[token * p.key_token_stride + kv_head * p.key_head_stride + d * p.key_dim_stride])
                   : to_float<Q>(value[token * p.value_token_stride + kv_head * p.value_head_stride +
                                       d * p.value_dim_stride]);
      }
      kv_s[j * LD + d] = v;
    }
  };

  for (int r0 = cta.query_begin; r0 < cta.query_end; r0 += RP) {
    const int rows = cta.query_end - r0 < RP ? cta.query_end - r0 : RP;
    const int q_pos0 = cta.ctx_len + r0;  // sequence position of the pass's row 0
    for (int e = tid; e < rows * HS; e += NT) {
      const int i = e / HS, d = e % HS;
      const std::int64_t token = cta.token_offset + r0 + i;
      q_s[i * LD + d] = to_float<Q>(
          query[token * p.query_token_stride + head * p.query_head_stride + d * p.query_dim_stride]);
    }
    if (tid < RP) {
      m_s[tid] = kNegInf;
      l_s[tid] = 0.0f;
    }
    float acc[ACC];
    PAO_UNROLL
    for (int a = 0; a < ACC; ++a) acc[a] = 0.0f;
    __syncthreads();

    for (int t = 0; t < cta.num_tiles; ++t) {
      const PrefixDeviceTile tile = args.tiles[cta.first_tile + t];
      const int nk = tile.num_keys;
      if (nk == 0) continue;  // new-token tiles past the query: every key masked
      const int k_pos0 = tile.kind == 0 ? tile.key_begin : cta.ctx_len + tile.key_begin;
      if (!prefix_tile_visible(q_pos0, q_pos0 + rows - 1, k_pos0, k_pos0 + nk - 1, p.sliding_window))
        continue;

      // Steps 1-5: logits of every (row, key).
      load_tile(tile, true);
      __syncthreads();
      for (int e = tid; e < rows * nk; e += NT) {
        const int i = e / nk, j = e % nk;
        const int q_pos = q_pos0 + i, k_pos = k_pos0 + j;
        float z = kNegInf;
        if (prefix_visible(q_pos, k_pos, p.sliding_window)) {
          const float* q = q_s + i * LD;
          const float* k = kv_s + j * LD;
          float dot = __fmul_rn(q[0], k[0]);
          for (int d = 1; d < HS; ++d) dot = __fmaf_rn(q[d], k[d], dot);
          z = prefix_logit(dot, logits, k_pos, q_pos);
        }
        z_s[i * W + j] = z;
      }
      __syncthreads();

      // Steps 6-12 but P·V: one thread per row, keys in token order.
      if (tid < rows) {
        float* z = z_s + tid * W;
        const float m_old = m_s[tid];
        float m_new = m_old;
        for (int j = 0; j < nk; ++j) m_new = m_new < z[j] ? z[j] : m_new;  // std::max
        float l_tile = 0.0f;
        for (int j = 0; j < nk; ++j) {
          const float pj = m_new == kNegInf ? 0.0f : pao::kernel_exp(__fsub_rn(z[j], m_new));
          l_tile = __fadd_rn(l_tile, pj);
          z[j] = round_to<Q>(pj);  // p.to(v.dtype); l keeps the unrounded p
        }
        const float alpha = m_old == kNegInf ? 0.0f : pao::kernel_exp(__fsub_rn(m_old, m_new));
        alpha_s[tid] = alpha;
        l_s[tid] = __fmaf_rn(l_s[tid], alpha, l_tile);
        m_s[tid] = m_new;
      }
      __syncthreads();  // also: every thread is done with K

      // Step 9 and 11: acc = acc * alpha, then fma over the keys with p' != 0, in token order.
      load_tile(tile, false);
      __syncthreads();
      PAO_UNROLL
      for (int a = 0; a < ACC; ++a) {
        const int e = tid + a * NT;
        const int i = e / HS, d = e % HS;
        if (i >= rows) continue;
        const float* pr = z_s + i * W;
        float x = __fmul_rn(acc[a], alpha_s[i]);
        for (int j = 0; j < nk; ++j) {
          const float pj = pr[j];
          if (pj != 0.0f) x = __fmaf_rn(pj, kv_s[j * LD + d], x);
        }
        acc[a] = x;
      }
      __syncthreads();  // before the next tile overwrites kv_s and z_s
    }

    // out = acc / (l + 1e-10f), rounded once.
    QElem* const out = static_cast<QElem*>(p.out);
    PAO_UNROLL
    for (int a = 0; a < ACC; ++a) {
      const int e = tid + a * NT;
      const int i = e / HS, d = e % HS;
      if (i >= rows) continue;
      const std::int64_t token = cta.token_offset + r0 + i;
      out[(token * p.num_heads + head) * HS + d] =
          from_float<Q>(__fdiv_rn(acc[a], __fadd_rn(l_s[i], 1e-10f)));
    }
    __syncthreads();  // before the next pass overwrites q_s, m_s, l_s
  }
}

}  // namespace pao::cuda::detail

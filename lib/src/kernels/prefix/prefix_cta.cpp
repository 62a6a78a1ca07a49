// The prefix CTA in both precisions: one walk over the plan's K tiles with FlashAttention-2 online
// softmax, templated on the arithmetic type. `double` is the exact precision (fp64 everywhere, no
// guard, one division by l); `float` is the kernel precision, whose every step docs/prefix.md
// defines for the CUDA port: the places where the two differ are marked `if constexpr (kKernel<T>)`.
//
// Skipped work is exact no-op work, so skipping changes no bit (docs/prefix.md, "What is skipped"):
// a (row, tile) pair with no visible key leaves m, l and acc unchanged; a probability that is 0
// (masked, or underflowed) adds nothing to acc; a tile no row of the CTA can see is not loaded.
#include "kernels/prefix/prefix_cta.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/common/view_row.hpp"
#include "kernels/prefix/kv_tile.hpp"
#include "kernels/prefix/prefix_tile_math.hpp"
#include "numerics/exp_f64.hpp"
#include "pao/numerics/element.hpp"
#include "pao/numerics/kernel_math.hpp"
#include "pao/plan/partition.hpp"

namespace pao::detail {

namespace {

template <typename T>
constexpr bool kKernel = std::is_same_v<T, float>;

/// Keys [key_begin, key_begin + num_keys) of the cached context, dequantized as the precision
/// defines it (kv_tile.hpp), into dst with strides `dest`. A tile may span several blocks and start
/// inside one; such a block is loaded from its first token into a staging tile (kv_tile's contract
/// is tokens [0, n) of a block) and the wanted tokens copied out.
template <typename T>
void load_context(const PrefixProblem& p, const PrefixCta& cta, std::int32_t kv_head, const PrefixTile& tile,
                  bool is_key, T* dst, TileDest dest) {
  const PagedKV& kv = p.kv;
  const std::byte* cache = is_key ? kv.key_data : kv.value_data;
  const PagedCacheLayout& layout = is_key ? kv.key_layout : kv.value_layout;
  const float scale = (is_key ? kv.k_scales : kv.v_scales)[static_cast<std::size_t>(kv_head)];
  const std::int32_t* table = kv.block_table(cta.seq);
  const std::int32_t bs = kv.block_size, hs = p.head_size;
  const IntegerDequant* integer = kv.integer_dequant(is_key ? CacheTensor::key : CacheTensor::value);
  auto load = [&](std::int32_t block, std::int32_t n, T* out, TileDest out_dest) {
    if constexpr (kKernel<T>)
      load_tile_kernel(cache, layout, kv.cache_dtype, scale, p.dtype, block, kv_head, n, bs, hs, out,
                       out_dest, false, integer);
    else
      load_tile_exact(cache, layout, kv.cache_dtype, scale, block, kv_head, n, bs, hs, out, out_dest,
                      integer);
  };
  thread_local std::vector<T> stage;
  for (std::int32_t t = 0; t < tile.num_keys;) {
    const std::int32_t pos = tile.key_begin + t;
    const std::int32_t offset = pos % bs;
    const std::int32_t n = std::min(bs - offset, tile.num_keys - t);
    if (offset == 0) {
      load(table[pos / bs], n, dst + t * dest.token_stride, dest);
    } else {
      stage.resize(static_cast<std::size_t>(offset + n) * hs);  // [token][dim]
      load(table[pos / bs], offset + n, stage.data(), {hs, 1});
      for (std::int32_t i = 0; i < n; ++i)
        for (std::int32_t d = 0; d < hs; ++d)
          dst[(t + i) * dest.token_stride + d * dest.dim_stride] =
              stage[static_cast<std::size_t>(offset + i) * hs + d];
    }
    t += n;
  }
}

/// Keys [key_begin, key_begin + num_keys) of the sequence's new tokens, from key / value.
template <typename T>
void load_new(const PrefixProblem& p, const PrefixCta& cta, std::int32_t kv_head, const PrefixTile& tile,
              T* kt, std::int64_t ldk, T* v, T* row) {
  const std::int32_t hs = p.head_size;
  for (std::int32_t j = 0; j < tile.num_keys; ++j) {
    const std::int64_t token = cta.token_offset + tile.key_begin + j;
    read_row(p.key, token, kv_head, hs, row);
    for (std::int32_t d = 0; d < hs; ++d) kt[d * ldk + j] = row[d];
    read_row(p.value, token, kv_head, hs, v + static_cast<std::int64_t>(j) * hs);
  }
}

template <typename T>
void run_cta(const PrefixProblem& p, const PrefixCta& cta, T* out) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  const PrefixPlan& plan = p.plan;
  const AttentionScalars& sc = p.scalars;
  const std::int32_t G = p.queries_per_kv(), hs = p.head_size;
  const std::int32_t kv_head = cta.head / G;
  const std::int32_t rows = cta.num_rows();
  const std::int32_t R = G * rows;  // row g * rows + i: head kv_head * G + g, query row query_begin + i
  constexpr std::int32_t C = kQkChunk<T>;
  const std::int32_t widest = std::max(plan.shape.block_n, plan.shape.context_tile);
  const std::int32_t jcap = round_up(widest, C);
  const std::int32_t window = sc.sliding_window;

  thread_local std::vector<T> q, acc, m, l, kt, v, s, row, zeros;
  thread_local std::vector<std::int32_t> tokens, iota;
  q.resize(static_cast<std::size_t>(R) * hs);
  acc.assign(static_cast<std::size_t>(R) * hs, T(0));
  m.assign(static_cast<std::size_t>(R), neg_inf);
  l.assign(static_cast<std::size_t>(R), T(0));
  kt.resize(static_cast<std::size_t>(hs) * jcap);
  v.resize(static_cast<std::size_t>(widest) * hs);
  s.resize(static_cast<std::size_t>(8) * jcap);
  row.resize(static_cast<std::size_t>(hs));
  zeros.assign(static_cast<std::size_t>(jcap), T(0));
  tokens.resize(static_cast<std::size_t>(jcap));
  iota.resize(static_cast<std::size_t>(jcap));
  std::iota(iota.begin(), iota.end(), 0);

  for (std::int32_t g = 0; g < G; ++g)
    for (std::int32_t i = 0; i < rows; ++i)
      read_row(p.query, cta.token_offset + cta.query_begin + i, kv_head * G + g, hs,
               q.data() + (static_cast<std::size_t>(g) * rows + i) * hs);

  const std::int32_t q_pos0 = cta.ctx_len + cta.query_begin;  // sequence position of row i = 0
  for (const PrefixTile& tile : plan.tiles_of(cta)) {
    const std::int32_t nk = tile.num_keys;
    if (nk == 0) continue;  // new-token tiles past query_len: every key masked
    const std::int32_t k_pos0 = tile.key_position(cta.ctx_len);
    // Rows that see some key of the tile: causal (q_pos >= k_pos0) and, with a window,
    // q_pos - (k_pos0 + nk - 1) < window. They are contiguous.
    const std::int32_t i_lo = std::max(0, k_pos0 - q_pos0);
    const auto i_hi = static_cast<std::int32_t>(
        window > 0 ? std::min<std::int64_t>(rows, std::int64_t{k_pos0} + nk - 1 + window - q_pos0) : rows);
    if (i_lo >= i_hi) continue;

    const std::int32_t jpad = round_up(nk, C);
    if (tile.kind == PrefixTileKind::context) {
      load_context(p, cta, kv_head, tile, true, kt.data(), {1, jpad});
      load_context(p, cta, kv_head, tile, false, v.data(), {hs, 1});
    } else if (p.new_kv_source == NewKVSource::cache) {  // the new tokens' slots, as context is read
      PrefixTile cached = tile;
      cached.key_begin = k_pos0;
      load_context(p, cta, kv_head, cached, true, kt.data(), {1, jpad});
      load_context(p, cta, kv_head, cached, false, v.data(), {hs, 1});
    } else {
      load_new(p, cta, kv_head, tile, kt.data(), jpad, v.data(), row.data());
    }
    for (std::int32_t d = 0; d < hs; ++d)  // padding keys: their dots are computed, never used
      std::fill(kt.begin() + static_cast<std::ptrdiff_t>(d) * jpad + nk,
                kt.begin() + static_cast<std::ptrdiff_t>(d + 1) * jpad, T(0));

    for (std::int32_t g = 0; g < G; ++g) {
      const LogitParams lp = logit_params(sc, kv_head * G + g);
      for (std::int32_t ib = i_lo; ib < i_hi; ib += 8) {
        const std::int32_t nb = std::min(8, i_hi - ib);
        const std::size_t r0 = static_cast<std::size_t>(g) * rows + ib;
        qk_any_rows<T>(q.data() + r0 * hs, hs, kt.data(), jpad, hs, jpad, nb, s.data(), jpad);

        // The block's rows, phase by phase, so that the per-row work vectorises and the rows'
        // independent sequential sums interleave. Row b's visible keys: [j0[b], j1[b]), non-empty.
        std::int32_t j0[8], j1[8];
        T m_new[8], l_tile[8];
        bool live[8];
        for (std::int32_t b = 0; b < nb; ++b) {
          const std::int32_t q_pos = q_pos0 + ib + b;
          j0[b] = window > 0 ? static_cast<std::int32_t>(
                                   std::max<std::int64_t>(0, std::int64_t{q_pos} - window + 1 - k_pos0))
                             : 0;
          j1[b] = std::min(nk, q_pos - k_pos0 + 1);
          T* z = s.data() + static_cast<std::size_t>(b) * jpad;
          // Logits: scale, soft-cap, ALiBi, the prefix kernels' one definition (kernel: fp32, each
          // a separate rounding). Keys outside [j0, j1) are masked: they take no part in the max
          // and get p = 0 exactly.
          if constexpr (kKernel<T>) {
            for (std::int32_t j = j0[b]; j < j1[b]; ++j) z[j] = prefix_logit(z[j], lp, k_pos0 + j, q_pos);
          } else {
            for (std::int32_t j = j0[b]; j < j1[b]; ++j)
              z[j] = prefix_logit_exact(z[j], lp, k_pos0 + j, q_pos);
          }
          m_new[b] = std::max(m[r0 + b], range_max(z + j0[b], j1[b] - j0[b]));
          // Every visible logit -inf (only with infinite inputs): p = 0 everywhere, and acc is
          // still 0 (m = -inf before too), so the update is a no-op.
          live[b] = m_new[b] != neg_inf;
          if (!live[b]) continue;
          if constexpr (kKernel<T>) {
            for (std::int32_t j = j0[b]; j < j1[b]; ++j) z[j] = z[j] - m_new[b];
            kernel_exp_n(z + j0[b], z + j0[b], j1[b] - j0[b]);
          } else {
            for (std::int32_t j = j0[b]; j < j1[b]; ++j) z[j] = z[j] - m_new[b];
            exp_f64_n(z + j0[b], z + j0[b], j1[b] - j0[b]);
          }
        }
        // l_tile: each row's p summed in token order, eight rows' chains interleaved. Over the
        // union of the rows' ranges, with p = 0 outside a row's own range: adding +0 to a sum
        // that starts at +0 and only grows changes no bit.
        std::int32_t jmin = nk, jmax = 0;
        for (std::int32_t b = 0; b < nb; ++b)
          if (live[b]) {
            jmin = std::min(jmin, j0[b]);
            jmax = std::max(jmax, j1[b]);
          }
        const T* rows8[8];
        for (std::int32_t b = 0; b < 8; ++b) {
          rows8[b] = zeros.data();
          if (b >= nb) continue;
          T* z = s.data() + static_cast<std::size_t>(b) * jpad;
          if (!live[b]) continue;
          std::fill(z + jmin, z + j0[b], T(0));
          std::fill(z + j1[b], z + std::max(jmax, j1[b]), T(0));
          rows8[b] = z;
        }
        T sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (std::int32_t j = jmin; j < jmax; ++j)
#pragma GCC unroll 8
          for (std::int32_t b = 0; b < 8; ++b) sums[b] = sums[b] + rows8[b][j];
        for (std::int32_t b = 0; b < nb; ++b) l_tile[b] = sums[b];

        // Rescale, round p (kernel), update l and m; P·V below needs only p.
        bool dense[8];  // p != 0 on the row's whole visible range
        for (std::int32_t b = 0; b < nb; ++b) {
          if (!live[b]) continue;
          const std::size_t r = r0 + b;
          T* pb = s.data() + static_cast<std::size_t>(b) * jpad;
          T alpha;
          if constexpr (kKernel<T>)
            alpha = m[r] == neg_inf ? 0.0f : kernel_exp(m[r] - m_new[b]);
          else
            alpha = m[r] == neg_inf ? 0.0 : exp_f64(m[r] - m_new[b]);
          T* a = acc.data() + r * hs;
          if (alpha != T(1))  // x * 1 == x, bit for bit
            for (std::int32_t d = 0; d < hs; ++d) a[d] = a[d] * alpha;
          // Kernel: p.to(v.dtype) before P·V; l keeps the unrounded p.
          if constexpr (kKernel<T>)
            round_to_activation(p.dtype, pb + j0[b], static_cast<std::size_t>(j1[b] - j0[b]));
          std::int32_t num_zero = 0;
          for (std::int32_t j = j0[b]; j < j1[b]; ++j) num_zero += pb[j] == T(0) ? 1 : 0;
          dense[b] = num_zero == 0;
          if constexpr (kKernel<T>)
            l[r] = std::fma(l[r], alpha, l_tile[b]);
          else
            l[r] = l[r] * alpha + l_tile[b];
          m[r] = m_new[b];
        }
        // P·V over the keys with p != 0, in token order; two rows at once where both are dense
        // over the same range (they share the loads of V).
        for (std::int32_t b = 0; b < nb;) {
          if (!live[b]) {
            ++b;
            continue;
          }
          const T* pb = s.data() + static_cast<std::size_t>(b) * jpad;
          T* a = acc.data() + (r0 + b) * hs;
          if (b + 1 < nb && live[b + 1] && dense[b] && dense[b + 1] && j0[b] == j0[b + 1] &&
              j1[b] == j1[b + 1]) {
            pv_row_pair(pb, pb + jpad, iota.data() + j0[b], j1[b] - j0[b], v.data(), hs, hs, a, a + hs);
            b += 2;
            continue;
          }
          if (dense[b]) {
            pv_row(pb, iota.data() + j0[b], j1[b] - j0[b], v.data(), hs, hs, a);
          } else {
            std::int32_t n = 0;
            for (std::int32_t j = j0[b]; j < j1[b]; ++j) {
              tokens[static_cast<std::size_t>(n)] = j;
              n += pb[j] != T(0) ? 1 : 0;
            }
            pv_row(pb, tokens.data(), n, v.data(), hs, hs, a);
          }
          ++b;
        }
      }
    }
  }

  // Every row sees at least its own token, so l >= 1 (the row max contributes exp(0) = 1).
  for (std::int32_t r = 0; r < R; ++r) {
    const T* a = acc.data() + static_cast<std::size_t>(r) * hs;
    T* o = out + static_cast<std::size_t>(r) * hs;
    if constexpr (kKernel<T>) {
      const float denom = l[static_cast<std::size_t>(r)] + 1e-10f;  // vLLM's guard
      for (std::int32_t d = 0; d < hs; ++d) o[d] = a[d] / denom;
    } else {
      const double denom = l[static_cast<std::size_t>(r)];
      for (std::int32_t d = 0; d < hs; ++d) o[d] = denom > 0 ? a[d] / denom : 0.0;
    }
  }
}

}  // namespace

void run_prefix_cta_exact(const PrefixProblem& p, const PrefixCta& cta, double* out) {
  run_cta<double>(p, cta, out);
}
void run_prefix_cta_kernel(const PrefixProblem& p, const PrefixCta& cta, float* out) {
  run_cta<float>(p, cta, out);
}

}  // namespace pao::detail

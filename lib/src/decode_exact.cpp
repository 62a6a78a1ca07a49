// Exact precision of a decode partition: K and V decoded to fp64, every operation in fp64.
// The result does not depend on partitioning beyond fp64 rounding (~1e-16 relative).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "decode_partition.hpp"
#include "kv_tile.hpp"

namespace pao::detail {

void run_partition_exact(const DecodeProblem& p, const PartitionTask& task, PartitionResult<double> r) {
  const PagedKV& kv = p.kv;
  const std::int32_t G = p.queries_per_kv(), hs = p.head_size, bs = kv.block_size;
  const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(task.seq)];
  const std::int32_t query_pos = seq_len - 1;
  const std::int32_t n = task.token_end - task.token_begin;
  const AttentionScalars& sc = p.scalars;
  const double scale = sc.scale;

  thread_local std::vector<double> q, k_tile, v_tile, logits, dots_buf;
  q.assign(static_cast<std::size_t>(G) * hs, 0.0);
  k_tile.resize(static_cast<std::size_t>(hs) * bs);  // [dim][token]
  v_tile.resize(static_cast<std::size_t>(bs) * hs);  // [token][dim]
  logits.resize(static_cast<std::size_t>(G) * n);
  dots_buf.resize(static_cast<std::size_t>(bs));
  double* dots = dots_buf.data();
  for (std::int32_t g = 0; g < G; ++g)
    for (std::int32_t d = 0; d < hs; ++d)
      q[static_cast<std::size_t>(g) * hs + d] = p.query.at({task.seq, task.kv_head * G + g, d});

  const std::int32_t* table = kv.block_table(task.seq);
  const std::int32_t first_block = task.token_begin / bs;
  const std::int32_t last_block = (task.token_end - 1) / bs;

  // Pass 1: logits.
  for (std::int32_t b = first_block; b <= last_block; ++b) {
    const std::int32_t t0 = b * bs;
    const std::int32_t nt = std::min(bs, task.token_end - t0);
    load_tile_exact(kv.key_data, kv.key_layout, kv.cache_dtype, kv.k_scales[task.kv_head], table[b],
                    task.kv_head, nt, hs, k_tile.data(), {1, bs});
    for (std::int32_t g = 0; g < G; ++g) {
      std::fill(dots, dots + nt, 0.0);
      const double* qg = q.data() + static_cast<std::size_t>(g) * hs;
      for (std::int32_t d = 0; d < hs; ++d) {
        const double* krow = k_tile.data() + static_cast<std::size_t>(d) * bs;
        for (std::int32_t t = 0; t < nt; ++t) dots[t] += qg[d] * krow[t];
      }
      const std::int32_t head = task.kv_head * G + g;
      const double slope = sc.alibi_slopes.empty() ? 0.0 : sc.alibi_slopes[static_cast<std::size_t>(head)];
      for (std::int32_t t = 0; t < nt; ++t) {
        const std::int32_t token = t0 + t;
        double s = scale * dots[t];
        if (sc.soft_cap > 0) s = sc.soft_cap * std::tanh(s / sc.soft_cap);
        s += slope * (token - seq_len + 1);
        if (!in_window(query_pos, token, sc.sliding_window)) s = -std::numeric_limits<double>::infinity();
        logits[static_cast<std::size_t>(g) * n + (token - task.token_begin)] = s;
      }
    }
  }

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
    std::fill(r.out + static_cast<std::size_t>(g) * hs, r.out + static_cast<std::size_t>(g + 1) * hs, 0.0);
  }

  // Pass 2: weighted sum of V.
  for (std::int32_t b = first_block; b <= last_block; ++b) {
    const std::int32_t t0 = b * bs;
    const std::int32_t nt = std::min(bs, task.token_end - t0);
    load_tile_exact(kv.value_data, kv.value_layout, kv.cache_dtype, kv.v_scales[task.kv_head], table[b],
                    task.kv_head, nt, hs, v_tile.data(), {hs, 1});
    for (std::int32_t g = 0; g < G; ++g) {
      const double* e = logits.data() + static_cast<std::size_t>(g) * n + (t0 - task.token_begin);
      double* acc = r.out + static_cast<std::size_t>(g) * hs;
      for (std::int32_t t = 0; t < nt; ++t) {
        if (e[t] == 0.0) continue;  // masked or underflowed: contributes nothing (and no NaN)
        const double* vrow = v_tile.data() + static_cast<std::size_t>(t) * hs;
        for (std::int32_t d = 0; d < hs; ++d) acc[d] += e[t] * vrow[d];
      }
    }
  }
  for (std::int32_t g = 0; g < G; ++g) {
    const double l = r.exp_sum[g];
    double* acc = r.out + static_cast<std::size_t>(g) * hs;
    if (l > 0)
      for (std::int32_t d = 0; d < hs; ++d) acc[d] /= l;
  }
}

}  // namespace pao::detail

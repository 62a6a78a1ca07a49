// From a dot product q·k to a logit: scale, soft-cap, ALiBi and the masks, one definition per
// kernel family, each following its vLLM kernel. The CPU kernel precision and the CUDA kernels
// call the same PAO_HD functions (no CUDA headers; device builds use --fmad=false -prec-div=true,
// so `*`, `/` and fmaf round exactly as on the host); exact precision has its fp64 twins.
//
//   decode (paged_attention V1/V2, csrc/attention/attention_kernels.cuh):
//     qk = scale * dot;  soft-cap: qk = cap * tanh(qk / cap);
//     ALiBi: qk += slope * (token - seq_len + 1) when slope != 0, one fma;
//     window (extension): tokens with query_pos - token >= window are masked (-inf).
//   prefix (context_attention_fwd, vllm/attention/ops/prefix_prefill.py):
//     z = scale * dot;  soft-cap as above;  ALiBi: z = z + slope * (k_pos - q_pos), two roundings;
//     visible iff k_pos <= q_pos and, with a window W > 0, q_pos - k_pos < W.
#pragma once

#include <cmath>
#include <cstdint>

#include "pao/core/hd.hpp"
#include "pao/numerics/kernel_math.hpp"

namespace pao {

/// The scalars of a logit, for one query head.
struct LogitParams {
  float scale = 1.0f;
  float soft_cap = 0.0f;  // 0 = off
  float alibi_slope = 0.0f;
  bool alibi = false;               // prefix: add the bias (decode adds it when alibi_slope != 0, as vLLM)
  std::int32_t sliding_window = 0;  // 0 = off
};

/// Decode: whether token `token` is inside the sliding window of the query at `query_pos`.
PAO_HD bool decode_visible(std::int32_t query_pos, std::int32_t token, std::int32_t sliding_window) {
  return sliding_window <= 0 || query_pos - token < sliding_window;
}

/// Decode, kernel precision: the logit of `token` (of a sequence of seq_len tokens), -inf when
/// the window masks it.
PAO_HD float decode_logit(float dot, const LogitParams& p, std::int32_t token, std::int32_t seq_len) {
  float qk = p.scale * dot;
  if (p.soft_cap > 0.0f) qk = p.soft_cap * kernel_tanh(qk / p.soft_cap);
  if (p.alibi_slope != 0.0f) qk = fmaf(p.alibi_slope, static_cast<float>(token - seq_len + 1), qk);
  return decode_visible(seq_len - 1, token, p.sliding_window) ? qk : -INFINITY;
}

/// Prefix: whether key position k is visible to query position q.
PAO_HD bool prefix_visible(std::int32_t q, std::int32_t k, std::int32_t window) {
  return k <= q && (window <= 0 || q - k < window);
}

/// Prefix: whether some query position in [q_lo, q_hi] sees some key position in [k_lo, k_hi]
/// (both ranges non-empty). When not, the tile changes no bit of those rows (docs/prefix.md,
/// "What is skipped") and the kernels skip it.
PAO_HD bool prefix_tile_visible(std::int32_t q_lo, std::int32_t q_hi, std::int32_t k_lo, std::int32_t k_hi,
                                std::int32_t window) {
  const std::int32_t q = q_lo > k_lo ? q_lo : k_lo;  // the first row that is past the first key
  if (q > q_hi) return false;
  return window <= 0 || q <= k_hi || static_cast<std::int64_t>(q) - k_hi < window;
}

/// Prefix, kernel precision: the logit of a visible (q_pos, k_pos) pair.
PAO_HD float prefix_logit(float dot, const LogitParams& p, std::int32_t k_pos, std::int32_t q_pos) {
  float z = p.scale * dot;
  if (p.soft_cap > 0.0f) z = p.soft_cap * kernel_tanh(z / p.soft_cap);
  if (p.alibi) z = z + p.alibi_slope * static_cast<float>(k_pos - q_pos);
  return z;
}

#if !defined(__CUDA_ARCH__)
/// Decode, exact precision (fp64; tanh of the C library): the bias whenever ALiBi is on.
inline double decode_logit_exact(double dot, const LogitParams& p, std::int32_t token, std::int32_t seq_len) {
  double qk = static_cast<double>(p.scale) * dot;
  if (p.soft_cap > 0) qk = p.soft_cap * std::tanh(qk / p.soft_cap);
  if (p.alibi) qk += static_cast<double>(p.alibi_slope) * (token - seq_len + 1);
  return decode_visible(seq_len - 1, token, p.sliding_window) ? qk : -INFINITY;
}

/// Prefix, exact precision.
inline double prefix_logit_exact(double dot, const LogitParams& p, std::int32_t k_pos, std::int32_t q_pos) {
  double z = static_cast<double>(p.scale) * dot;
  if (p.soft_cap > 0) z = p.soft_cap * std::tanh(z / p.soft_cap);
  if (p.alibi) z = z + static_cast<double>(p.alibi_slope) * static_cast<double>(k_pos - q_pos);
  return z;
}
#endif

}  // namespace pao

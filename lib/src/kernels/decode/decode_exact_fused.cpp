// The fused exact decode loops (see decode_exact_fused.hpp), written for AVX-512.
//
// Q·K: chunk c of the key block holds 8 contiguous dims of each token, one fp64 register after
// widening; chunk c feeds the general loop's chain c % 2 (it steps 16 dims in two 8-lane
// chains). The two chains are added lane-wise and the 8 lanes summed left to right, the lanes of
// 8 tokens at once (an 8 x 8 transpose).
// P·V: row d of the value block holds the block's tokens contiguously; 8 tokens per register,
// each register's fma adds token t into lane t % 8 of acc[g][d], in token order.
#include "kernels/decode/decode_exact_fused.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/decode/count_dispatch.hpp"
#include "simd/x86.hpp"

namespace pao::detail {

#if defined(__AVX512F__)

namespace {

/// Lane-wise sums of the two chains of GN heads, for every token of the block: parts[g][t][8].
/// Two tokens per pass, so that each query load feeds two fmas.
template <DType dt, int GN>
void qk_parts(const std::byte* key, std::int32_t hs, std::int32_t bs, const double* q /*[GN][hs]*/,
              double* parts /*[GN][bs][8]*/) {
  constexpr std::size_t es = dtype_size(dt);
  const std::int32_t chunks = hs / 8;
  for (std::int32_t t = 0; t < bs; t += 2) {
    __m512d even[2][GN], odd[2][GN];
    for (int j = 0; j < 2; ++j)
      for (int g = 0; g < GN; ++g) even[j][g] = odd[j][g] = _mm512_setzero_pd();
    auto step = [&](std::int32_t c, __m512d(&chain)[2][GN]) {
      const std::byte* kc = key + (static_cast<std::size_t>(c) * bs + t) * 8 * es;
      const __m512d k[2] = {load8_f64<dt>(kc), load8_f64<dt>(kc + 8 * es)};
      for (int g = 0; g < GN; ++g) {
        const __m512d qc = _mm512_loadu_pd(q + static_cast<std::size_t>(g) * hs + c * 8);
        for (int j = 0; j < 2; ++j) chain[j][g] = _mm512_fmadd_pd(qc, k[j], chain[j][g]);
      }
    };
    std::int32_t c = 0;
    for (; c + 2 <= chunks; c += 2) {
      step(c, even);
      step(c + 1, odd);
    }
    if (c < chunks) step(c, even);
    for (int j = 0; j < 2; ++j)
      for (int g = 0; g < GN; ++g)
        _mm512_storeu_pd(parts + (static_cast<std::size_t>(g) * bs + t + j) * 8,
                         _mm512_add_pd(even[j][g], odd[j][g]));
  }
}

template <DType dt>
void qk_all_heads(const std::byte* key, std::int32_t hs, std::int32_t bs, std::int32_t G, const double* q,
                  double* parts, double* out, std::int64_t out_stride) {
  const std::size_t q_stride = static_cast<std::size_t>(hs), p_stride = static_cast<std::size_t>(bs) * 8;
  for_head_groups(G, [&](int h, auto n) {
    qk_parts<dt, decltype(n)::value>(key, hs, bs, q + h * q_stride, parts + h * p_stride);
  });
  for (std::int32_t g = 0; g < G; ++g)
    for (std::int32_t t0 = 0; t0 < bs; t0 += 8) {
      const double* p = parts + static_cast<std::size_t>(g) * p_stride + static_cast<std::size_t>(t0) * 8;
      __m512d lanes[8];  // token t0 + i's lanes, then lane i of the 8 tokens
      for (int i = 0; i < 8; ++i) lanes[i] = _mm512_loadu_pd(p + i * 8);
      transpose8x8(lanes);
      __m512d dot = _mm512_setzero_pd();
      for (int lane = 0; lane < 8; ++lane) dot = _mm512_add_pd(dot, lanes[lane]);
      _mm512_storeu_pd(out + g * out_stride + t0, dot);
    }
}

/// P·V of GN heads (GN <= 4) over R runs of 16 tokens (R <= 2, consecutive in token order;
/// run r's row d starts at runs[r] + d * row_bytes), the weights held in registers: every row d
/// adds the runs' 8-token fmas into acc[g][d], lower tokens first. Two runs per pass halve the
/// accumulators' loads and stores.
template <DType dt, int GN, int R>
void pv_heads(const std::byte* const* runs, std::size_t row_bytes, std::int32_t d_begin, std::int32_t d_end,
              const double* w, std::int64_t w_stride, bool first, double* acc, std::size_t acc_stride) {
  __m512d wv[R][2][GN];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < GN; ++g) {
      wv[r][0][g] = _mm512_loadu_pd(w + g * w_stride + 16 * r);
      wv[r][1][g] = _mm512_loadu_pd(w + g * w_stride + 16 * r + 8);
    }
  for (std::int32_t d = d_begin; d < d_end; ++d) {
    __m512d v[R][2];
    for (int r = 0; r < R; ++r) {
      const std::byte* row = runs[r] + static_cast<std::size_t>(d) * row_bytes;
      v[r][0] = load8_f64<dt>(row);
      v[r][1] = load8_f64<dt>(row + 8 * dtype_size(dt));
    }
    for (int g = 0; g < GN; ++g) {
      double* a = acc + g * acc_stride + static_cast<std::size_t>(d) * 8;
      __m512d sum = first ? _mm512_setzero_pd() : _mm512_loadu_pd(a);
      for (int r = 0; r < R; ++r)
        sum = _mm512_fmadd_pd(wv[r][1][g], v[r][1], _mm512_fmadd_pd(wv[r][0][g], v[r][0], sum));
      _mm512_storeu_pd(a, sum);
    }
  }
}

/// P·V of all heads over `num_blocks` whole blocks, in runs of kRows dims: each run's
/// accumulators (G x kRows x 64 bytes) stay in L1 while the blocks stream by from L2 (where the
/// K walk prefetched them, decode_partition.hpp). The blocks' 16-token runs go two at a time.
template <DType dt>
void pv_blocks(const PagedKV& kv, const PartitionTask& task, std::int32_t num_blocks, std::int32_t hs,
               std::int32_t G, const double* w, std::int64_t w_stride, double* acc, std::size_t acc_stride) {
  constexpr std::int32_t kRows = 64;
  constexpr int kRunsPerPass = 2;
  constexpr std::size_t es = dtype_size(dt);
  const std::int32_t bs = kv.block_size, runs_per_block = bs / 16, num_runs = num_blocks * runs_per_block;
  const std::size_t row_bytes = static_cast<std::size_t>(bs) * es;
  const std::int32_t* table = kv.block_table(task.seq) + task.token_begin / bs;
  auto slice = [&](std::int32_t b) {
    return kv.value_data + kv.value_layout.offset(table[b], task.kv_head, 0, 0) * es;
  };
  auto prefetch_rows = [&](std::int32_t b, std::int32_t d0, std::int32_t d1) {
    const char* rows = reinterpret_cast<const char*>(slice(b) + static_cast<std::size_t>(d0) * row_bytes);
    for (std::size_t line = 0; line < static_cast<std::size_t>(d1 - d0) * row_bytes; line += 64)
      _mm_prefetch(rows + line, _MM_HINT_T0);
  };
  if (num_blocks == 0)
    for (std::int32_t g = 0; g < G; ++g)
      std::fill_n(acc + g * acc_stride, static_cast<std::size_t>(hs) * 8, 0.0);
  for (std::int32_t d0 = 0; d0 < hs; d0 += kRows) {
    const std::int32_t d1 = std::min(hs, d0 + kRows);
    for (std::int32_t i = 0; i < num_runs; i += kRunsPerPass) {
      const int R = std::min(kRunsPerPass, num_runs - i);
      const std::byte* runs[kRunsPerPass];
      for (int r = 0; r < R; ++r) {
        const std::int32_t run = i + r, b = run / runs_per_block;
        runs[r] = slice(b) + static_cast<std::size_t>(run % runs_per_block) * 16 * es;
        // A run that opens block b moves the rows [d0, d1) of block b + 2 into L1.
        if (run % runs_per_block == 0 && b + 2 < num_blocks) prefetch_rows(b + 2, d0, d1);
      }
      const double* wi = w + static_cast<std::size_t>(i) * 16;
      for_head_groups(G, [&](int h, auto n) {
        constexpr int GN = decltype(n)::value;
        double* ah = acc + h * acc_stride;
        with_count<kRunsPerPass>(R, [&](auto r) {
          pv_heads<dt, GN, decltype(r)::value>(runs, row_bytes, d0, d1, wi + h * w_stride, w_stride, i == 0,
                                               ah, acc_stride);
        });
      });
    }
  }
}

}  // namespace

bool fused_exact_supported(const DecodeProblem& p) {
  const PagedKV& kv = p.kv;
  const DType dt = kv.cache_dtype;
  if (!(dt == DType::f16 || dt == DType::bf16)) return false;
  const std::int32_t bs = kv.block_size;
  const PagedCacheLayout& k = kv.key_layout;
  const PagedCacheLayout& v = kv.value_layout;
  const bool key_dense =
      k.x == 8 && k.dim_inner_stride == 1 && k.token_stride == 8 && k.dim_outer_stride == bs * 8;
  const bool value_dense = v.x == 1 && v.token_stride == 1 && v.dim_outer_stride == bs;
  return key_dense && value_dense && bs % 16 == 0 && p.head_size % 8 == 0;
}

FusedExactBlocks::FusedExactBlocks(const DecodeProblem& p, const double* q, std::int32_t G)
    : p_(p), q_(q), G_(G) {
  thread_local std::vector<double> parts;
  parts.resize(static_cast<std::size_t>(G) * p.kv.block_size * 8);
  parts_ = parts.data();
}

void FusedExactBlocks::qk(const std::byte* key_slice, double* out, std::int64_t out_stride) {
  const std::int32_t hs = p_.head_size, bs = p_.kv.block_size;
  if (p_.kv.cache_dtype == DType::f16)
    qk_all_heads<DType::f16>(key_slice, hs, bs, G_, q_, parts_, out, out_stride);
  else
    qk_all_heads<DType::bf16>(key_slice, hs, bs, G_, q_, parts_, out, out_stride);
}

void FusedExactBlocks::pv(const PartitionTask& task, std::int32_t num_blocks, const double* w,
                          std::int64_t w_stride, double* acc, std::size_t acc_stride) const {
  const std::int32_t hs = p_.head_size;
  if (p_.kv.cache_dtype == DType::f16)
    pv_blocks<DType::f16>(p_.kv, task, num_blocks, hs, G_, w, w_stride, acc, acc_stride);
  else
    pv_blocks<DType::bf16>(p_.kv, task, num_blocks, hs, G_, w, w_stride, acc, acc_stride);
}

#else  // no AVX-512: the general loops run every block

bool fused_exact_supported(const DecodeProblem&) { return false; }

FusedExactBlocks::FusedExactBlocks(const DecodeProblem& p, const double* q, std::int32_t G)
    : p_(p), q_(q), G_(G), parts_(nullptr) {
  throw std::logic_error("FusedExactBlocks: built without AVX-512 (fused_exact_supported() is false)");
}
void FusedExactBlocks::qk(const std::byte*, double*, std::int64_t) {}
void FusedExactBlocks::pv(const PartitionTask&, std::int32_t, const double*, std::int64_t, double*,
                          std::size_t) const {}

#endif

}  // namespace pao::detail

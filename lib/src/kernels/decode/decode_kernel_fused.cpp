// The fused decode loops (see decode_kernel_fused.hpp), written for AVX-512.
//
// Q·K: the key block stores, per chunk c of x = dims_per_step dims, each token's x dims
// contiguously, and dim c * x + a belongs to the kernel's accumulator a. So one register of 16
// lanes holds 16 / x tokens x (accumulators 0..x-1): the loop over chunks is each accumulator's
// own chain (a product, then fmas in dim order), one vector fma for all of them. The finished
// accumulators are gathered back to one register per accumulator (lanes = tokens) and summed
// by the kernel's tree: each thread's vec_size accumulators left to right, then the thread
// group's xor butterfly.
//
// P·V: the value block ([dim][token]) is converted and transposed once into [token][dim]; then
// for each run of 16 dims, the chain of pv_dot runs in registers (lanes = dims).
#include "kernels/decode/decode_kernel_fused.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/decode/count_dispatch.hpp"
#include "pao/plan/partition.hpp"
#include "simd/x86.hpp"

namespace pao::detail {

#if defined(__AVX512F__)

namespace {

/// Q·K of GN heads (GN <= 4) for the whole block, two registers of tokens at a time (8
/// independent fma chains in flight); dots[g][t][a].
template <DType dt, int GN>
void qk_heads(const std::byte* key, std::int32_t hs, std::int32_t bs, const float* q_lanes /*[GN][hs/A][16]*/,
              float* dots /*[GN][bs][A]*/) {
  constexpr std::size_t es = dtype_size(dt);
  constexpr std::int32_t A = 16 / es, per_reg = 16 / A;
  const std::int32_t chunks = hs / A;
  const std::size_t q_stride = static_cast<std::size_t>(chunks) * 16;
  auto key_at = [&](std::int32_t c, std::int32_t t0) {
    return load16_f32<dt>(key + (static_cast<std::size_t>(c) * bs + t0) * A * es);
  };
  // bs is a multiple of 16, so of 2 * per_reg.
  for (std::int32_t t0 = 0; t0 < bs; t0 += 2 * per_reg) {
    __m512 acc[2][GN];
    const __m512 k0 = key_at(0, t0), k1 = key_at(0, t0 + per_reg);
    for (int g = 0; g < GN; ++g) {
      const __m512 q = _mm512_loadu_ps(q_lanes + g * q_stride);
      acc[0][g] = _mm512_mul_ps(q, k0);
      acc[1][g] = _mm512_mul_ps(q, k1);
    }
    for (std::int32_t c = 1; c < chunks; ++c) {
      const __m512 ka = key_at(c, t0), kb = key_at(c, t0 + per_reg);
      for (int g = 0; g < GN; ++g) {
        const __m512 q = _mm512_loadu_ps(q_lanes + g * q_stride + static_cast<std::size_t>(c) * 16);
        acc[0][g] = _mm512_fmadd_ps(q, ka, acc[0][g]);
        acc[1][g] = _mm512_fmadd_ps(q, kb, acc[1][g]);
      }
    }
    for (int g = 0; g < GN; ++g) {
      float* row = dots + (static_cast<std::size_t>(g) * bs + t0) * A;
      _mm512_storeu_ps(row, acc[0][g]);
      _mm512_storeu_ps(row + 16, acc[1][g]);
    }
  }
}

/// The kernel's tree over the A accumulators of 16 tokens at `dots` ([token][A]).
__m512 reduce_tokens(const DecodeGeometry& geo, const float* dots) {
  const std::int32_t A = geo.dims_per_step, vs = geo.vec_size;
  const __m512i index = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(A));
  __m512 sums[16];
  if (A == 8) {  // f16 / bf16: a register transpose instead of gathers
    __m512 cols[8];
    transpose16x8(dots, cols);
    for (std::int32_t o = 0; o < geo.thread_group_size; ++o) {
      __m512 s = cols[o * vs];
      for (std::int32_t l = 1; l < vs; ++l) s = _mm512_add_ps(s, cols[o * vs + l]);
      sums[o] = s;
    }
  } else {
    for (std::int32_t o = 0; o < geo.thread_group_size; ++o) {
      __m512 s = _mm512_i32gather_ps(index, dots + o * vs, 4);
      for (std::int32_t l = 1; l < vs; ++l)
        s = _mm512_add_ps(s, _mm512_i32gather_ps(index, dots + o * vs + l, 4));
      sums[o] = s;
    }
  }
  for (std::int32_t mask = geo.thread_group_size / 2; mask >= 1; mask /= 2)
    for (std::int32_t i = 0; i < mask; ++i) sums[i] = _mm512_add_ps(sums[i], sums[i + mask]);
  return sums[0];
}

__mmask16 tail_mask(std::int32_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1u);
}

/// acc[16k + lane] += pv_dot's chain for NC runs of 16 dims (lanes) at once, so that the NC
/// chains (2 NC for f16's even and odd sums) overlap. v rows are `row_stride` apart; the last
/// run holds the dims of `last` (a mask: head sizes that are not a multiple of 16). The chain
/// covers v_vec_size = 16 / sizeof(activation) tokens (block_size >= 16 here).
template <DType dtype, int NC>
void pv_runs(const float* p, const float* v, std::int64_t row_stride, __mmask16 last, float* acc) {
  constexpr std::int32_t VV = dtype == DType::f32 ? 4 : 8;
  auto load = [&](const float* at, int k) {
    return k == NC - 1 ? _mm512_maskz_loadu_ps(last, at + 16 * k) : _mm512_loadu_ps(at + 16 * k);
  };
  auto product = [&](std::int32_t t, int k) {
    const __m512 x = _mm512_mul_ps(_mm512_set1_ps(p[t]), load(v + t * row_stride, k));
    if constexpr (dtype == DType::f16)
      return round_f16_x16(x);
    else if constexpr (dtype == DType::bf16)
      return round_bf16_x16(x);
    else
      return x;
  };
  __m512 dot[NC];
  if constexpr (dtype == DType::f16) {
    // Even and odd tokens summed separately in f16, then float(even) + float(odd).
    __m512 even[NC], odd[NC];
    for (int k = 0; k < NC; ++k) {
      even[k] = product(0, k);
      odd[k] = product(1, k);
    }
    for (std::int32_t t = 2; t < VV; t += 2)
      for (int k = 0; k < NC; ++k) {
        even[k] = round_f16_x16(_mm512_add_ps(even[k], product(t, k)));
        odd[k] = round_f16_x16(_mm512_add_ps(odd[k], product(t + 1, k)));
      }
    for (int k = 0; k < NC; ++k) dot[k] = _mm512_add_ps(even[k], odd[k]);
  } else if constexpr (dtype == DType::bf16) {
    // Pairs of rounded products summed in fp32, pair sums left to right.
    for (int k = 0; k < NC; ++k) dot[k] = _mm512_add_ps(product(0, k), product(1, k));
    for (std::int32_t t = 2; t < VV; t += 2)
      for (int k = 0; k < NC; ++k)
        dot[k] = _mm512_add_ps(dot[k], _mm512_add_ps(product(t, k), product(t + 1, k)));
  } else {
    for (int k = 0; k < NC; ++k) dot[k] = product(0, k);
    for (std::int32_t t = 1; t < VV; ++t)
      for (int k = 0; k < NC; ++k) dot[k] = _mm512_add_ps(dot[k], product(t, k));
  }
  for (int k = 0; k < NC - 1; ++k)
    _mm512_storeu_ps(acc + 16 * k, _mm512_add_ps(_mm512_loadu_ps(acc + 16 * k), dot[k]));
  float* tail = acc + 16 * (NC - 1);
  _mm512_mask_storeu_ps(tail, last, _mm512_add_ps(_mm512_maskz_loadu_ps(last, tail), dot[NC - 1]));
}

template <DType dtype>
void pv_all_dims(const float* p, const float* v, std::int32_t hs, float* acc) {
  for (std::int32_t d0 = 0; d0 < hs; d0 += 128) {
    const std::int32_t dims = std::min<std::int32_t>(128, hs - d0);
    const __mmask16 last = tail_mask(dims - 16 * (ceil_div(dims, 16) - 1));
    const float* vd = v + d0;
    float* ad = acc + d0;
    with_count<8>((dims + 15) / 16,
                  [&](auto runs) { pv_runs<dtype, decltype(runs)::value>(p, vd, hs, last, ad); });
  }
}

}  // namespace

bool fused_decode_supported(const DecodeProblem& p, const DecodeGeometry& g) {
  const PagedKV& kv = p.kv;
  const DType dt = kv.cache_dtype;
  if (dt != p.dtype || !(dt == DType::f32 || dt == DType::f16 || dt == DType::bf16)) return false;
  const std::int32_t bs = kv.block_size, x = static_cast<std::int32_t>(16 / dtype_size(dt));
  const PagedCacheLayout& k = kv.key_layout;
  const PagedCacheLayout& v = kv.value_layout;
  const bool key_dense =
      k.x == x && k.dim_inner_stride == 1 && k.token_stride == x && k.dim_outer_stride == bs * x;
  const bool value_dense = v.x == 1 && v.token_stride == 1 && v.dim_outer_stride == bs;
  return key_dense && value_dense && g.dims_per_step == x && bs % 16 == 0 && g.thread_group_size <= 16 &&
         g.v_vec_size == x && p.head_size % x == 0;
}

FusedDecodeBlocks::FusedDecodeBlocks(const DecodeProblem& p, const DecodeGeometry& g, const float* q,
                                     std::int32_t G)
    : p_(p), g_(g), G_(G) {
  const std::int32_t hs = p.head_size, bs = p.kv.block_size, A = g.dims_per_step, chunks = hs / A;
  thread_local std::vector<float> q_lanes, dots, v_tile;
  q_lanes.resize(static_cast<std::size_t>(G) * chunks * 16);
  dots.resize(static_cast<std::size_t>(G) * bs * A);
  v_tile.resize(static_cast<std::size_t>(bs) * hs);
  // Lane l of chunk c's register: accumulator l % A, i.e. dim c * A + l % A.
  for (std::int32_t h = 0; h < G; ++h)
    for (std::int32_t c = 0; c < chunks; ++c)
      for (std::int32_t l = 0; l < 16; ++l)
        q_lanes[(static_cast<std::size_t>(h) * chunks + c) * 16 + l] =
            q[static_cast<std::size_t>(h) * hs + c * A + l % A];
  q_lanes_ = q_lanes.data();
  dots_ = dots.data();
  v_tile_ = v_tile.data();
}

namespace {

template <DType dt>
void qk_all_heads(const DecodeGeometry& g, const std::byte* key, std::int32_t hs, std::int32_t bs,
                  std::int32_t G, const float* q_lanes, float* dots, float* out, std::int64_t out_stride) {
  constexpr std::int32_t A = 16 / static_cast<std::int32_t>(dtype_size(dt));
  const std::size_t q_stride = static_cast<std::size_t>(hs / A) * 16,
                    d_stride = static_cast<std::size_t>(bs) * A;
  for_head_groups(G, [&](int h, auto n) {
    qk_heads<dt, decltype(n)::value>(key, hs, bs, q_lanes + h * q_stride, dots + h * d_stride);
  });
  for (std::int32_t head = 0; head < G; ++head)
    for (std::int32_t t0 = 0; t0 < bs; t0 += 16)
      _mm512_storeu_ps(out + head * out_stride + t0,
                       reduce_tokens(g, dots + head * d_stride + static_cast<std::size_t>(t0) * A));
}

/// [head_size][block_size] -> [block_size][head_size] fp32, in 16 x 16 register transposes.
template <DType dt>
void transpose_value(const std::byte* value, std::int32_t hs, std::int32_t bs, float* tile) {
  constexpr std::size_t es = dtype_size(dt);
  for (std::int32_t d0 = 0; d0 < hs; d0 += 16) {
    const __mmask16 m = tail_mask(hs - d0);
    for (std::int32_t t0 = 0; t0 < bs; t0 += 16) {
      __m512 r[16];
      for (std::int32_t i = 0; i < 16; ++i)
        r[i] = d0 + i < hs ? load16_f32<dt>(value + (static_cast<std::size_t>(d0 + i) * bs + t0) * es)
                           : _mm512_setzero_ps();
      transpose16x16(r);
      for (std::int32_t j = 0; j < 16; ++j)
        _mm512_mask_storeu_ps(tile + static_cast<std::size_t>(t0 + j) * hs + d0, m, r[j]);
    }
  }
}

}  // namespace

void FusedDecodeBlocks::qk(const std::byte* key_slice, float* out, std::int64_t out_stride) {
  with_float_dtype(p_.kv.cache_dtype, [&](auto dt) {
    qk_all_heads<decltype(dt)::value>(g_, key_slice, p_.head_size, p_.kv.block_size, G_, q_lanes_, dots_, out,
                                      out_stride);
  });
}

void FusedDecodeBlocks::load_value(const std::byte* value_slice) {
  with_float_dtype(p_.kv.cache_dtype, [&](auto dt) {
    transpose_value<decltype(dt)::value>(value_slice, p_.head_size, p_.kv.block_size, v_tile_);
  });
}

void FusedDecodeBlocks::pv(const float* probs, std::int32_t first_token, float* acc) const {
  const float* v = v_tile_ + static_cast<std::size_t>(first_token) * p_.head_size;
  with_float_dtype(p_.dtype, [&](auto dt) { pv_all_dims<decltype(dt)::value>(probs, v, p_.head_size, acc); });
}

#else  // no AVX-512: the general loops run every block

bool fused_decode_supported(const DecodeProblem&, const DecodeGeometry&) { return false; }

FusedDecodeBlocks::FusedDecodeBlocks(const DecodeProblem& p, const DecodeGeometry& g, const float*,
                                     std::int32_t G)
    : p_(p), g_(g), G_(G), q_lanes_(nullptr), dots_(nullptr), v_tile_(nullptr) {
  throw std::logic_error("FusedDecodeBlocks: built without AVX-512 (fused_decode_supported() is false)");
}
void FusedDecodeBlocks::qk(const std::byte*, float*, std::int64_t) {}
void FusedDecodeBlocks::load_value(const std::byte*) {}
void FusedDecodeBlocks::pv(const float*, std::int32_t, float*) const {}

#endif

}  // namespace pao::detail

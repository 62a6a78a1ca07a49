// Dense tiles from a paged cache.
#include "kernels/prefix/kv_tile.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "pao/numerics/element.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "simd/x86.hpp"

namespace pao::detail {

namespace {

/// dst[j * dst_stride + i] = in[i][j] for a 16 x 16 block of floats.
void transpose16(const float (&in)[16][16], float* dst, std::int64_t dst_stride) {
#if defined(__AVX512F__)
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(in[i]);
  transpose16x16(r);
  for (int j = 0; j < 16; ++j) _mm512_storeu_ps(dst + j * dst_stride, r[j]);
#else
  for (int j = 0; j < 16; ++j)
    for (int i = 0; i < 16; ++i) dst[j * dst_stride + i] = in[i][j];
#endif
}

/// Float tiles of the vLLM layouts in 16 x 16 blocks; false when the shapes do not fit.
bool transpose_key_chunks(const float* src, std::int64_t bs, std::int64_t x, std::int64_t head_size,
                          std::int64_t num_tokens, float* dst, std::int64_t dim_stride) {
  // [head_size/x][bs][x] -> [dim][token]: 16 tokens x (16 / x chunks of x dims) per block.
  if (x > 16 || 16 % x != 0 || head_size % 16 != 0 || bs % 16 != 0 || num_tokens != bs) return false;
  float in[16][16];
  const std::int64_t per = 16 / x;
  for (std::int64_t c = 0; c < head_size / x; c += per)
    for (std::int64_t t0 = 0; t0 < bs; t0 += 16) {
      for (std::int64_t t = 0; t < 16; ++t)
        for (std::int64_t h = 0; h < per; ++h)
          for (std::int64_t i = 0; i < x; ++i) in[t][h * x + i] = src[((c + h) * bs + t0 + t) * x + i];
      transpose16(in, dst + c * x * dim_stride + t0, dim_stride);
    }
  return true;
}

bool transpose_value_rows(const float* src, std::int64_t bs, std::int64_t head_size, std::int64_t num_tokens,
                          float* dst, std::int64_t token_stride) {
  // [head_size][bs] -> [token][dim]
  if (head_size % 16 != 0 || bs % 16 != 0 || num_tokens != bs) return false;
  float in[16][16];
  for (std::int64_t d0 = 0; d0 < head_size; d0 += 16)
    for (std::int64_t t0 = 0; t0 < bs; t0 += 16) {
      for (std::int64_t d = 0; d < 16; ++d) std::memcpy(in[d], src + (d0 + d) * bs + t0, 16 * sizeof(float));
      transpose16(in, dst + t0 * token_stride + d0, token_stride);
    }
  return true;
}

/// Copies tokens [0, num_tokens) x dims [0, head_size) of one block/head into `dst`, decoding
/// with `decode(src, out, n)` over contiguous runs of the cache.
template <typename T, typename Decode>
void copy_tile(const std::byte* cache, const PagedCacheLayout& l, DType dtype, std::int64_t block,
               std::int32_t head, std::int32_t num_tokens, std::int32_t block_size, std::int32_t head_size,
               T* dst, TileDest dest, Decode decode) {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t bs = block_size, x = l.x;
  thread_local std::vector<T> run;
  const std::byte* base = cache + l.offset(block, head, 0, 0) * es;
  // vLLM key cache: the (block, head) slice is one dense [head_size/x][block_size][x] run.
  if (x > 1 && l.dim_inner_stride == 1 && l.token_stride == x && l.dim_outer_stride == bs * x) {
    run.resize(static_cast<std::size_t>(head_size * bs));
    decode(base, run.data(), run.size());
    const T* src = run.data();
    if (dest.dim_stride == 1) {  // token-major: rows of x contiguous dims
      for (std::int64_t c = 0; c < head_size / x; ++c)
        for (std::int64_t t = 0; t < num_tokens; ++t)
          std::copy(src + (c * bs + t) * x, src + (c * bs + t + 1) * x, dst + t * dest.token_stride + c * x);
    } else if (dest.token_stride ==
               1) {  // dim-major: a [block_size][x] -> [x][block_size] transpose per chunk
      if constexpr (std::is_same_v<T, float>)
        if (transpose_key_chunks(src, bs, x, head_size, num_tokens, dst, dest.dim_stride)) return;
      for (std::int64_t c = 0; c < head_size / x; ++c)
        for (std::int64_t i = 0; i < x; ++i) {
          T* row = dst + (c * x + i) * dest.dim_stride;
          const T* col = src + c * bs * x + i;
          for (std::int64_t t = 0; t < num_tokens; ++t) row[t] = col[t * x];
        }
    } else {
      for (std::int64_t c = 0; c < head_size / x; ++c)
        for (std::int64_t t = 0; t < num_tokens; ++t)
          for (std::int64_t i = 0; i < x; ++i)
            dst[t * dest.token_stride + (c * x + i) * dest.dim_stride] = src[(c * bs + t) * x + i];
    }
    return;
  }
  // vLLM value cache: one dense [head_size][block_size] run.
  if (x == 1 && l.token_stride == 1 && l.dim_outer_stride == bs) {
    if (dest.token_stride == 1 && dest.dim_stride == bs) {  // the tile is the stored slice
      decode(base, dst, static_cast<std::size_t>(head_size * bs));
      return;
    }
    run.resize(static_cast<std::size_t>(head_size * bs));
    decode(base, run.data(), run.size());
    const T* src = run.data();
    if (dest.token_stride == 1) {  // dim-major, as stored
      for (std::int64_t d = 0; d < head_size; ++d)
        std::copy(src + d * bs, src + d * bs + num_tokens, dst + d * dest.dim_stride);
    } else if (dest.dim_stride == 1) {  // token-major: a [head_size][block_size] transpose
      if constexpr (std::is_same_v<T, float>)
        if (transpose_value_rows(src, bs, head_size, num_tokens, dst, dest.token_stride)) return;
      for (std::int64_t t = 0; t < num_tokens; ++t) {
        T* row = dst + t * dest.token_stride;
        for (std::int64_t d = 0; d < head_size; ++d) row[d] = src[d * bs + t];
      }
    } else {
      for (std::int64_t t = 0; t < num_tokens; ++t)
        for (std::int64_t d = 0; d < head_size; ++d)
          dst[t * dest.token_stride + d * dest.dim_stride] = src[d * bs + t];
    }
    return;
  }
  if (l.token_stride == 1) {  // tokens contiguous: a run per dim
    run.resize(static_cast<std::size_t>(num_tokens));
    for (std::int32_t d = 0; d < head_size; ++d) {
      decode(cache + l.offset(block, head, 0, d) * es, run.data(), static_cast<std::size_t>(num_tokens));
      for (std::int32_t t = 0; t < num_tokens; ++t) dst[t * dest.token_stride + d * dest.dim_stride] = run[t];
    }
    return;
  }
  // Runs along dims: chunks of x, or whole rows (NHD).
  std::int32_t chunk = 1;
  if (x > 1 && l.dim_inner_stride == 1)
    chunk = static_cast<std::int32_t>(x);
  else if (x == 1 && l.dim_outer_stride == 1)
    chunk = head_size;
  run.resize(static_cast<std::size_t>(chunk));
  for (std::int32_t t = 0; t < num_tokens; ++t) {
    for (std::int32_t d0 = 0; d0 < head_size; d0 += chunk) {
      decode(cache + l.offset(block, head, t, d0) * es, run.data(), static_cast<std::size_t>(chunk));
      for (std::int32_t i = 0; i < chunk; ++i)
        dst[t * dest.token_stride + (d0 + i) * dest.dim_stride] = run[i];
    }
  }
}

}  // namespace

void round_to_activation(DType dtype, float* v, std::size_t n) {
  std::size_t i = 0;
  if (dtype == DType::f16) {
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(v + i, round_f16_x16(_mm512_loadu_ps(v + i)));
#endif
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, round_f16_x8(_mm256_loadu_ps(v + i)));
#endif
    for (; i < n; ++i) v[i] = round_to_f16(v[i]);
  } else if (dtype == DType::bf16) {
    for (; i < n; ++i) v[i] = round_to_bf16(v[i]);
  }
}

void prefetch_tile(const std::byte* cache, const PagedCacheLayout& l, DType dtype, std::int64_t block,
                   std::int32_t head, std::int32_t block_size, std::int32_t head_size, PrefetchTo to) {
  // __builtin_prefetch's locality must be a constant: 3 = all levels (L1), 2 = L2 and beyond.
  auto prefetch = [to](const std::byte* p) {
    if (to == PrefetchTo::l1)
      __builtin_prefetch(p, 0, 3);
    else
      __builtin_prefetch(p, 0, 2);
  };
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t slice = static_cast<std::int64_t>(block_size) * head_size * es;
  const bool dense = (l.x > 1 && l.token_stride == l.x && l.dim_outer_stride == block_size * l.x) ||
                     (l.x == 1 && l.token_stride == 1 && l.dim_outer_stride == block_size);
  if (dense) {
    // To L2, one line in two: measured faster than every line on this project's Zen 4 (pao-bench's
    // exact decode), presumably because the L2's adjacent-line prefetcher brings the pair's other
    // line and half the prefetches leave more of the L1's miss buffers to the loads.
    const std::int64_t step = to == PrefetchTo::l2 ? 128 : 64;
    const std::byte* base = cache + l.offset(block, head, 0, 0) * es;
    for (std::int64_t off = 0; off < slice; off += step) prefetch(base + off);
    return;
  }
  for (std::int32_t t = 0; t < block_size; ++t) {
    const std::byte* row = cache + l.offset(block, head, t, 0) * es;
    for (std::int64_t off = 0; off < head_size * es; off += 64) prefetch(row + off);
  }
}

namespace {

/// The tile's codes, copied as they are, become (code - zero_point) * scale; `round` rounds each.
template <typename T, typename Round>
void dequantise_integer_tile(const IntegerDequant& q, std::int64_t block, std::int32_t head,
                             std::int32_t num_tokens, std::int32_t head_size, T* dst, TileDest dest,
                             Round round) {
  for (std::int32_t t = 0; t < num_tokens; ++t)
    for (std::int32_t d = 0; d < head_size; ++d) {
      const auto o = static_cast<std::size_t>(q.layout.offset(block, head, t, d));
      T& v = dst[t * dest.token_stride + d * dest.dim_stride];
      if constexpr (std::is_same_v<T, double>)
        v = dequantise_exact(v, q.scale[o], q.zero_point[o]);
      else
        v = round(dequantise_kernel(v, q.scale[o], q.zero_point[o]));
    }
}

}  // namespace

void load_tile_exact(const std::byte* cache, const PagedCacheLayout& layout, DType cache_dtype, double scale,
                     std::int64_t block, std::int32_t head, std::int32_t num_tokens, std::int32_t block_size,
                     std::int32_t head_size, double* dst, TileDest dest, const IntegerDequant* integer) {
  const bool scaled = is_fp8(cache_dtype) && scale != 1.0;
  copy_tile(cache, layout, cache_dtype, block, head, num_tokens, block_size, head_size, dst, dest,
            [&](const std::byte* src, double* out, std::size_t n) {
              decode_to_f64(cache_dtype, src, out, n);
              if (scaled)
                for (std::size_t i = 0; i < n; ++i) out[i] *= scale;
            });
  if (integer)
    dequantise_integer_tile(*integer, block, head, num_tokens, head_size, dst, dest,
                            [](double v) { return v; });
}

void load_tile_kernel(const std::byte* cache, const PagedCacheLayout& layout, DType cache_dtype, float scale,
                      DType activation_dtype, std::int64_t block, std::int32_t head, std::int32_t num_tokens,
                      std::int32_t block_size, std::int32_t head_size, float* dst, TileDest dest,
                      bool through_half, const IntegerDequant* integer) {
  const bool fp8 = is_fp8(cache_dtype);
  // vLLM's scaled_convert: fp8 -> float, times the scale in fp32, rounded to scalar_t, or for
  // through_half (f32 activations, vectors of 2+) to half and widened back.
  const DType rounding = fp8 && through_half ? DType::f16 : activation_dtype;
  copy_tile(cache, layout, cache_dtype, block, head, num_tokens, block_size, head_size, dst, dest,
            [&](const std::byte* src, float* out, std::size_t n) {
              decode_to_f32(cache_dtype, src, out, n);
              if (!fp8) return;
              for (std::size_t i = 0; i < n; ++i) out[i] *= scale;
              round_to_activation(rounding, out, n);
            });
  if (integer)
    dequantise_integer_tile(*integer, block, head, num_tokens, head_size, dst, dest, [&](float v) {
      round_to_activation(activation_dtype, &v, 1);
      return v;
    });
}

}  // namespace pao::detail

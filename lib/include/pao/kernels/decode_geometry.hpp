// The thread geometry of vLLM's paged-attention decode kernel (csrc/attention/
// attention_kernels.cuh): how a CTA's threads split the Q·K dot products and the P·V rows. The
// kernel precision reduces in exactly these groups and orders, so this struct fixes both the CPU
// emulation and the CUDA kernels. All sizes are in elements.
#pragma once

#include <cstdint>

#include "pao/core/dtype.hpp"
#include "pao/core/hd.hpp"

namespace pao {

struct DecodeGeometry {
  std::int32_t warp_size = 32;
  std::int32_t num_threads = 128;
  std::int32_t num_warps = 4;
  // Q·K: a thread group of `thread_group_size` lanes computes one token's dot product. Each lane
  // holds vectors of `vec_size` elements; lane o's vector j covers dims
  // j * dims_per_step + o * vec_size + [0, vec_size). Every (lane, vector element) pair is one
  // fp32 accumulator: accumulator a = dim % dims_per_step sums over j = dim / dims_per_step.
  std::int32_t thread_group_size = 1;
  std::int32_t vec_size = 1;
  std::int32_t dims_per_step = 1;  // thread_group_size * vec_size
  // P·V: a lane multiplies `v_vec_size` consecutive tokens of one row (dim) of V;
  // `v_vecs_per_row` lanes share a row and are reduced by a butterfly.
  std::int32_t v_vec_size = 1;
  std::int32_t v_vecs_per_row = 1;
  std::int32_t rows_per_iter = 1;

  /// elem_bytes: size of the activation dtype (scalar_t); 4 for f32, 2 for f16/bf16. A constant
  /// expression, so the CUDA kernels size their arrays and template arguments with it.
  PAO_HD static constexpr DecodeGeometry make(std::int32_t warp_size, std::int32_t num_threads,
                                              std::int32_t block_size, std::int32_t elem_bytes) {
    DecodeGeometry g;
    g.warp_size = warp_size;
    g.num_threads = num_threads;
    g.num_warps = num_threads / warp_size;
    g.thread_group_size = warp_size / block_size > 1 ? warp_size / block_size : 1;
    const std::int32_t vs = 16 / (g.thread_group_size * elem_bytes);
    g.vec_size = vs > 1 ? vs : 1;
    g.dims_per_step = g.thread_group_size * g.vec_size;
    g.v_vec_size = 16 / elem_bytes < block_size ? 16 / elem_bytes : block_size;
    g.v_vecs_per_row = block_size / g.v_vec_size;
    g.rows_per_iter = warp_size / g.v_vecs_per_row;
    return g;
  }
  /// vLLM's static_assert NUM_V_VECS_PER_ROW <= WARP_SIZE: a block's V vectors of one row fit in a
  /// warp. A larger block (1024 at warp 64) has no P·V rows per iteration (rows_per_iter 0).
  PAO_HD constexpr bool v_row_fits_warp() const { return v_vecs_per_row <= warp_size; }
};

/// pao's CUDA decode kernel (cuda/kernels/paged_attention_decode.cuh) takes a lane's K vectors of
/// a token in batches, every vector of a batch loaded before the batch's first product, where the
/// vectors hold at most kQkBatchMaxVecSize elements, outside integer caches (a dequantisation per
/// element): one batch — the loop unrolled whole — up to kQkWholeMaxVectors vectors (head size 128
/// under 16-bit activations at blocks of 8 and 16), beyond that the fewest batches of at most
/// kQkBatchBytes of K per lane (32 registers), evened out: head size 256 under 16-bit activations
/// in 2 batches of 16 vectors of 8 bytes at blocks of 16, in one of 32 vectors of 4 bytes at blocks
/// of 8; f32 at blocks of 32 (vectors of 16 bytes) in batches of 8. Over an fp8 cache, whose
/// dequantisation ptxas schedules beside the loads, batches hold at most kQkFp8BatchVectors.
/// Otherwise the loop is unrolled kQkUnroll times, each load beside its use. Measured (sm_90,
/// ptxas -v; docs/cuda.md, "Cut 7" and "Cut 8"): with vectors of 8 elements (blocks of 32 under
/// 16-bit activations) one batch of 16 took 254 registers at head size 128 and 162 at 64, against
/// 95 and 80 unrolled 4 times; beyond 16 vectors the registers follow a batch's bytes of K:
/// batches of 128 bytes kept the 16-bit instances within 96 registers and f32 within 126,
/// batches of 256 bytes took more or spilled; over fp8 caches batches of 16 vectors
/// spilled inside the loop, batches of 8 did not. The simulator's pao-cuda model counts a warp's
/// dependent load round trips by the same rule (qk_load_rounds).
inline constexpr std::int32_t kQkWholeMaxVectors = 16;
inline constexpr std::int32_t kQkBatchBytes = 128;
inline constexpr std::int32_t kQkFp8BatchVectors = 8;
inline constexpr std::int32_t kQkBatchMaxVecSize = 4;
inline constexpr std::int32_t kQkUnroll = 4;

/// What the Q·K batch rule reads of the cache's dtype, from the dtype table: the element's bytes,
/// and whether it holds fp8 or integer codes.
struct QkCache {
  std::int32_t element_bytes = 2;
  bool fp8 = false;
  bool integer = false;
};
inline constexpr QkCache qk_cache(DType cache) {
  return {static_cast<std::int32_t>(dtype_size(cache)), is_fp8(cache), is_integer_cache(cache)};
}
/// qk_cache(C) for device code, which cannot call the dtype table's host functions but may read
/// the value of a namespace-scope constexpr scalar: the table's answers, one scalar each.
template <DType C>
inline constexpr std::int32_t kQkCacheElementBytes = qk_cache(C).element_bytes;
template <DType C>
inline constexpr bool kQkCacheFp8 = qk_cache(C).fp8;
template <DType C>
inline constexpr bool kQkCacheInteger = qk_cache(C).integer;
template <DType C>
PAO_HD constexpr QkCache qk_cache_of() {
  return {kQkCacheElementBytes<C>, kQkCacheFp8<C>, kQkCacheInteger<C>};
}

/// K vectors per batch of pao's CUDA decode kernel's Q·K loop over `cache` (above); 0 where the
/// loop is unrolled kQkUnroll times instead.
PAO_HD constexpr std::int32_t qk_batch_vectors(const DecodeGeometry& g, std::int32_t head_size,
                                               QkCache cache) {
  if (g.vec_size > kQkBatchMaxVecSize || cache.integer) return 0;
  const std::int32_t vectors = head_size / g.dims_per_step;
  if (vectors <= kQkWholeMaxVectors) return vectors;
  const std::int32_t most =
      cache.fp8 ? kQkFp8BatchVectors : kQkBatchBytes / (g.vec_size * cache.element_bytes);
  const std::int32_t batches = (vectors + most - 1) / most;
  return (vectors + batches - 1) / batches;
}

/// The dependent load round trips of a lane's Q·K over one token in pao's CUDA decode kernel: its
/// batches, or one per kQkUnroll vectors.
PAO_HD constexpr std::int32_t qk_load_rounds(const DecodeGeometry& g, std::int32_t head_size, QkCache cache) {
  const std::int32_t vectors = head_size / g.dims_per_step;
  const std::int32_t batch = qk_batch_vectors(g, head_size, cache);
  const std::int32_t per_round = batch > 0 ? batch : kQkUnroll;
  return (vectors + per_round - 1) / per_round;
}

/// Whether vLLM's decode kernel dequantises an fp8 cache element through half for activations of
/// `activation` loaded in vectors of `vec_size` elements (csrc/quantization/fp8/nvidia/
/// quant_utils.cuh). Its scaled_convert into float2 / Float4_ / Float8_ (f32 activations, two or
/// more elements) goes fp8 -> half -> float, times the scale in fp32, rounded to half, then widened;
/// into a single float it does not round to half; into f16 / bf16 the product is rounded to the
/// activation dtype itself. So only f32 activations with vectors of 2+ change: K with
/// vec_size >= 2 (block size 16 or 32 at warp 32), V with v_vec_size >= 2 (always, blocks >= 2).
/// vLLM's Triton prefix kernel converts in fp32 and does not round through half.
PAO_HD constexpr bool fp8_dequant_through_half(DType activation, std::int32_t vec_size) {
  return activation == DType::f32 && vec_size >= 2;
}

}  // namespace pao

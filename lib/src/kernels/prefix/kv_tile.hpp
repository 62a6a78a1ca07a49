// Loading one block of one KV head of a paged cache into a dense tile, dequantized the way a
// precision defines it:
//   exact:  value = stored (fp64) * scale                  (scale = 1 unless fp8)
//   kernel: value = float(stored)                          (cache dtype = activation dtype)
//           value = round_to_activation(float(fp8) * scale) (fp8; vLLM's scaled_convert)
//           value = float(round_to_f16(float(fp8) * scale))  (fp8, f32 activations, through_half:
//                   vLLM's decode kernel with vectors of 2+ elements; fp8_dequant_through_half)
//   integer caches (`integer` given): (code - zero_point) * scale, exact in fp64 or, at kernel
//           precision, in f32 rounded to the activation dtype (pao/numerics/kv_quant.hpp)
// The tile is written with caller strides, so K can be stored dim-major [dim][token] and V
// token-major [token][dim]. The copy runs along whichever axis the layout stores contiguously.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/paged_kv.hpp"

namespace pao::detail {

struct TileDest {
  std::int64_t token_stride;
  std::int64_t dim_stride;
};

/// Tokens [0, num_tokens) of physical block `block` (of `block_size` slots), KV head `head`.
void load_tile_exact(const std::byte* cache, const PagedCacheLayout& layout, DType cache_dtype, double scale,
                     std::int64_t block, std::int32_t head, std::int32_t num_tokens, std::int32_t block_size,
                     std::int32_t head_size, double* dst, TileDest dest,
                     const IntegerDequant* integer = nullptr);

void load_tile_kernel(const std::byte* cache, const PagedCacheLayout& layout, DType cache_dtype, float scale,
                      DType activation_dtype, std::int64_t block, std::int32_t head, std::int32_t num_tokens,
                      std::int32_t block_size, std::int32_t head_size, float* dst, TileDest dest,
                      bool through_half = false, const IntegerDequant* integer = nullptr);

/// Asks the memory system for one block/head slice ahead of its use (a paged cache's blocks are
/// scattered, so hardware prefetchers cannot guess the next one), into L1 or only as far as L2.
enum class PrefetchTo { l1, l2 };
void prefetch_tile(const std::byte* cache, const PagedCacheLayout& layout, DType cache_dtype,
                   std::int64_t block, std::int32_t head, std::int32_t block_size, std::int32_t head_size,
                   PrefetchTo to);

/// Rounds each value to the activation dtype (f16/bf16: RNE; f32: unchanged), in place.
void round_to_activation(DType activation_dtype, float* values, std::size_t n);

}  // namespace pao::detail

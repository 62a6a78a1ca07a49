// Where element (block, kv_head, token-in-block, dim) of a paged K or V cache lives. One
// strided accessor serves every layout; the layout is data (strides), not a code path:
//   vLLM key   [num_blocks, num_kv_heads, head_size/x, block_size, x]   x = 16 / sizeof(elem)
//   vLLM value [num_blocks, num_kv_heads, head_size, block_size]        (x = 1)
//   NHD        [num_blocks, block_size, num_kv_heads, head_size]        (FlashAttention, FlashInfer "NHD")
//   HND        [num_blocks, num_kv_heads, block_size, head_size]        (FlashInfer "HND", IPEX)
// Host and device code compute addresses with this struct alone (PAO_HD, no CUDA headers). The
// builders below are the only place that turns a cache tensor's shape or strides into a layout:
// the CPU kernels, the case builders, the CUDA harness and benchmark all call them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "pao/core/dtype.hpp"
#include "pao/core/hd.hpp"
#include "pao/core/tensor.hpp"

namespace pao {

enum class KVLayout : std::uint8_t {
  vllm,  // key [nb, nkv, hs/x, bs, x], value [nb, nkv, hs, bs]
  nhd,   // key and value [nb, bs, nkv, hs]
  hnd,   // key and value [nb, nkv, bs, hs]
};

/// "vllm", "nhd" or "hnd": the name a case JSON, a golden's metadata and errors use.
const char* kv_layout_name(KVLayout layout);
/// The layout named `name`; false when there is none.
bool try_parse_kv_layout(std::string_view name, KVLayout& layout);
/// Every layout, in the order of the enum (for errors that list them).
inline constexpr KVLayout kAllKVLayouts[] = {KVLayout::vllm, KVLayout::nhd, KVLayout::hnd};

struct PagedCacheLayout {
  std::int64_t block_stride = 0;
  std::int64_t head_stride = 0;
  std::int64_t token_stride = 0;
  std::int64_t dim_outer_stride = 0;  // stride between chunks of `x` dims
  std::int64_t dim_inner_stride = 1;  // stride inside a chunk
  std::int32_t x = 1;                 // dims per chunk (1: plain dim stride)

  /// Element offset of (physical block, kv head, token within the block, dim).
  PAO_HD std::int64_t offset(std::int64_t block, std::int64_t head, std::int64_t token,
                             std::int64_t dim) const {
    return block * block_stride + head * head_stride + token * token_stride + (dim / x) * dim_outer_stride +
           (dim % x) * dim_inner_stride;
  }
};

/// The two tensors of a paged cache; they differ only in vLLM's layout.
enum class CacheTensor : std::uint8_t { key, value };

/// Elements per 16-byte chunk of vLLM's key cache: x = 16 / sizeof(cache element).
constexpr std::int32_t vllm_key_x(DType cache_dtype) {
  return static_cast<std::int32_t>(16 / dtype_size(cache_dtype));
}

/// The shape of a contiguous cache tensor in `layout` (see the table at the top of this file).
Shape cache_shape(KVLayout layout, CacheTensor tensor, std::int64_t num_blocks, std::int64_t num_kv_heads,
                  std::int64_t head_size, std::int64_t block_size, DType cache_dtype);

/// "[num_blocks, num_kv_heads, head_size/x, block_size, x]": the dims of a cache tensor, for errors.
const char* cache_shape_doc(KVLayout layout, CacheTensor tensor);

/// The sizes a cache tensor of `layout` declares, read from its shape (rank checked by the caller).
struct CacheDims {
  std::int64_t num_blocks = 0, num_kv_heads = 0, block_size = 0;
};
CacheDims cache_dims(KVLayout layout, CacheTensor tensor, std::span<const std::int64_t> shape);

/// The layout of a cache tensor of `layout` with the given shape and element strides, as a
/// TensorView holds them (any strides: padded rows, K and V interleaved in one buffer, ...). The
/// shape must have the layout's rank; the caller checks its sizes.
PagedCacheLayout cache_layout(KVLayout layout, CacheTensor tensor, std::span<const std::int64_t> shape,
                              std::span<const std::int64_t> strides);
/// The layout of a contiguous cache tensor of `shape`.
PagedCacheLayout contiguous_cache_layout(KVLayout layout, CacheTensor tensor, const Shape& shape);

/// Logical token `token` of a sequence lives in block_table[token / block_size] at offset
/// token % block_size.
struct BlockTableRef {
  const std::int32_t* table = nullptr;  // this sequence's row of block_tables
  std::int32_t block_size = 16;

  PAO_HD std::int32_t physical_block(std::int32_t token) const { return table[token / block_size]; }
  PAO_HD std::int32_t offset_in_block(std::int32_t token) const { return token % block_size; }
};

}  // namespace pao

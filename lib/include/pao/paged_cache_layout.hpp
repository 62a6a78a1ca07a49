// Where element (block, kv_head, token-in-block, dim) of a paged K or V cache lives. One
// strided accessor serves every layout; the layout is data (strides), not a code path:
//   vLLM key   [num_blocks, num_kv_heads, head_size/x, block_size, x]   x = 16 / sizeof(elem)
//   vLLM value [num_blocks, num_kv_heads, head_size, block_size]        (x = 1)
//   NHD        [num_blocks, block_size, num_kv_heads, head_size]        (FlashAttention, FlashInfer)
// Host and device code compute addresses with this struct alone (PAO_HD, no CUDA headers).
#pragma once

#include <cstdint>

#include "pao/hd.hpp"

namespace pao {

enum class KVLayout : std::uint8_t {
  vllm,  // key [nb, nkv, hs/x, bs, x], value [nb, nkv, hs, bs]
  nhd,   // key and value [nb, bs, nkv, hs]
};

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

/// Logical token `token` of a sequence lives in block_table[token / block_size] at offset
/// token % block_size.
struct BlockTableRef {
  const std::int32_t* table = nullptr;  // this sequence's row of block_tables
  std::int32_t block_size = 16;

  PAO_HD std::int32_t physical_block(std::int32_t token) const { return table[token / block_size]; }
  PAO_HD std::int32_t offset_in_block(std::int32_t token) const { return token % block_size; }
};

}  // namespace pao

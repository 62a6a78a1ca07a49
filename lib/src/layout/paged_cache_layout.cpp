// The layout builders of pao/layout/paged_cache_layout.hpp.
#include "pao/layout/paged_cache_layout.hpp"

#include "pao/core/error.hpp"

namespace pao {

const char* kv_layout_name(KVLayout layout) {
  switch (layout) {
    case KVLayout::vllm:
      return "vllm";
    case KVLayout::nhd:
      return "nhd";
    case KVLayout::hnd:
      return "hnd";
  }
  return "?";
}

bool try_parse_kv_layout(std::string_view name, KVLayout& layout) {
  for (const KVLayout l : kAllKVLayouts) {
    if (name == kv_layout_name(l)) {
      layout = l;
      return true;
    }
  }
  return false;
}

Shape cache_shape(KVLayout layout, CacheTensor tensor, std::int64_t num_blocks, std::int64_t num_kv_heads,
                  std::int64_t head_size, std::int64_t block_size, DType cache_dtype) {
  if (layout == KVLayout::nhd) return {num_blocks, block_size, num_kv_heads, head_size};
  if (layout == KVLayout::hnd) return {num_blocks, num_kv_heads, block_size, head_size};
  if (tensor == CacheTensor::value) return {num_blocks, num_kv_heads, head_size, block_size};
  const std::int64_t x = vllm_key_x(cache_dtype);
  require(head_size % x == 0, "key_cache: head_size ", head_size, " is not divisible by x = ", x,
          " (x = 16 / sizeof(", dtype_name(cache_dtype), "))");
  return {num_blocks, num_kv_heads, head_size / x, block_size, x};
}

const char* cache_shape_doc(KVLayout layout, CacheTensor tensor) {
  if (layout == KVLayout::nhd) return "[num_blocks, block_size, num_kv_heads, head_size]";
  if (layout == KVLayout::hnd) return "[num_blocks, num_kv_heads, block_size, head_size]";
  if (tensor == CacheTensor::value) return "[num_blocks, num_kv_heads, head_size, block_size]";
  return "[num_blocks, num_kv_heads, head_size/x, block_size, x]";
}

CacheDims cache_dims(KVLayout layout, CacheTensor tensor, std::span<const std::int64_t> shape) {
  (void)tensor;  // vLLM's key and value caches agree on these three dims
  if (layout == KVLayout::nhd) return {shape[0], shape[2], shape[1]};
  if (layout == KVLayout::hnd) return {shape[0], shape[1], shape[2]};
  return {shape[0], shape[1], shape[3]};
}

PagedCacheLayout cache_layout(KVLayout layout, CacheTensor tensor, std::span<const std::int64_t> shape,
                              std::span<const std::int64_t> st) {
  const bool vllm_key = layout == KVLayout::vllm && tensor == CacheTensor::key;
  const std::size_t rank = vllm_key ? 5 : 4;
  require(shape.size() == rank && st.size() == rank, tensor == CacheTensor::key ? "key_cache" : "value_cache",
          ": rank ", shape.size(), ", the layout needs ", rank);
  if (layout == KVLayout::nhd) return {st[0], st[2], st[1], st[3], 0, 1};  // [nb, bs, nkv, hs]
  if (layout == KVLayout::hnd) return {st[0], st[1], st[2], st[3], 0, 1};  // [nb, nkv, bs, hs]
  if (vllm_key)                                                            // [nb, nkv, hs/x, bs, x]
    return {st[0], st[1], st[3], st[2], st[4], static_cast<std::int32_t>(shape[4])};
  return {st[0], st[1], st[3], st[2], 0, 1};  // [nb, nkv, hs, bs]
}

PagedCacheLayout contiguous_cache_layout(KVLayout layout, CacheTensor tensor, const Shape& shape) {
  return cache_layout(layout, tensor, shape, contiguous_strides(shape));
}

}  // namespace pao

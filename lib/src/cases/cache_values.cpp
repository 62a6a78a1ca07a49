// A cache tensor as values (pao/cases/cache_values.hpp).
#include "pao/cases/cache_values.hpp"

#include "pao/core/error.hpp"

namespace pao::cases {

CacheValues::CacheValues(const Case& c, CacheTensor which, const Tensor& cache, const Tensor* scale,
                         const Tensor* zero_point)
    : c_(c),
      which_(which),
      layout_(contiguous_cache_layout(c.kv_layout, which, cache.shape())),
      stored_(cache.to_f64()),
      integer_(c.integer_cache()) {
  if (!integer_) return;
  require(scale != nullptr && zero_point != nullptr, "CacheValues: an integer cache needs its ",
          quant_param_name(which, false), " and ", quant_param_name(which, true));
  params_ = quant_param_layout(c.kv_quant.of(which), c.num_kv_heads, c.head_size, c.block_size);
  const Shape want =
      quant_param_shape(c.kv_quant.of(which), cache.size(0), c.num_kv_heads, c.head_size, c.block_size);
  for (const Tensor* t : {scale, zero_point})
    require(t->shape() == want, quant_param_name(which, t == zero_point), ": shape ",
            shape_to_string(t->shape()), " does not match ", shape_to_string(want), " (",
            to_string(c.kv_quant.of(which)), " of a cache of ", cache.size(0), " blocks)");
  scale_ = scale->to_f64();
  zero_point_ = zero_point->to_f64();
}

double CacheValues::at(std::int64_t block, std::int32_t head, std::int32_t token, std::int32_t dim) const {
  const double code = stored(block, head, token, dim);
  if (!integer_) return code * c_.kv_scale(which_, head);
  const auto o = static_cast<std::size_t>(params_.offset(block, head, token, dim));
  return dequantise_exact(code, scale_[o], zero_point_[o]);
}

}  // namespace pao::cases

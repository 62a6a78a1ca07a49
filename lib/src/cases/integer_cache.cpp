// Integer caches of generated cases (cases/integer_cache.hpp).
#include "cases/integer_cache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "pao/numerics/element.hpp"

namespace pao::detail {

double integer_cache_poison_code(const cases::Case& c) {
  return c.poison_unused ? code_range(c.cache_storage_dtype(), c.kv_quant.bits).hi : 0.0;
}

cases::QuantParamTensors make_quant_params(const cases::Case& c, std::int32_t num_blocks) {
  cases::QuantParamTensors q;
  const double poison = c.poison_unused ? std::numeric_limits<double>::quiet_NaN() : 1.0;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
    const Shape shape =
        quant_param_shape(c.kv_quant.of(t), num_blocks, c.num_kv_heads, c.head_size, c.block_size);
    q.param(t, false) = Tensor::filled(c.kv_quant.scale_dtype, shape, poison);
    q.param(t, true) = Tensor::filled(c.kv_quant.zero_point_dtype, shape, 0.0);
  }
  return q;
}

void write_integer_block(const cases::Case& c, CacheTensor which, Tensor& cache,
                         const PagedCacheLayout& layout, cases::QuantParamTensors& params, std::int64_t block,
                         std::int32_t head, const float* rows, std::int32_t n) {
  const TensorQuant& tq = c.kv_quant.of(which);
  const DType code_dtype = c.cache_storage_dtype();
  const std::int32_t hs = c.head_size;
  const QuantParamLayout pl = quant_param_layout(tq, c.num_kv_heads, hs, c.block_size);
  Tensor& scale = params.param(which, false);
  Tensor& zero_point = params.param(which, true);
  auto put_param = [&](std::int64_t offset, const QuantParams& p) {
    encode_element(scale.dtype(), p.scale,
                   scale.bytes() + offset * static_cast<std::int64_t>(dtype_size(scale.dtype())));
    encode_element(zero_point.dtype(), p.zero_point,
                   zero_point.bytes() + offset * static_cast<std::int64_t>(dtype_size(zero_point.dtype())));
  };
  std::vector<std::int32_t> codes(static_cast<std::size_t>(n) * hs);
  if (tq.granularity == QuantGranularity::by_channel) {
    std::vector<QuantParams> p(static_cast<std::size_t>(hs));
    quantise_block_by_channel(rows, n, hs, code_dtype, c.kv_quant, p.data(), codes.data());
    for (std::int32_t d = 0; d < hs; ++d)
      put_param(pl.offset(block, head, 0, d), p[static_cast<std::size_t>(d)]);
    // The unused slots of a partly filled block share its scales: their poison code is finite.
    if (!c.poison_unused)
      for (std::int32_t t = n; t < c.block_size; ++t)
        for (std::int32_t d = 0; d < hs; ++d)
          encode_element(
              code_dtype,
              std::clamp(static_cast<double>(std::nearbyint(p[static_cast<std::size_t>(d)].zero_point)),
                         code_range(code_dtype, c.kv_quant.bits).lo,
                         code_range(code_dtype, c.kv_quant.bits).hi),
              cache.bytes() +
                  layout.offset(block, head, t, d) * static_cast<std::int64_t>(dtype_size(code_dtype)));
  } else {
    std::vector<QuantParams> p(static_cast<std::size_t>(hs / pl.dims_per_param));
    for (std::int32_t t = 0; t < n; ++t) {
      quantise_row(rows + static_cast<std::size_t>(t) * hs, hs, pl.dims_per_param, code_dtype, c.kv_quant,
                   p.data(), codes.data() + static_cast<std::size_t>(t) * hs);
      for (std::int32_t d = 0; d < hs; d += pl.dims_per_param)
        put_param(pl.offset(block, head, t, d), p[static_cast<std::size_t>(d / pl.dims_per_param)]);
    }
  }
  const auto es = static_cast<std::int64_t>(dtype_size(code_dtype));
  for (std::int32_t t = 0; t < n; ++t)
    for (std::int32_t d = 0; d < hs; ++d)
      encode_element(code_dtype, codes[static_cast<std::size_t>(t) * hs + d],
                     cache.bytes() + layout.offset(block, head, t, d) * es);
}

}  // namespace pao::detail

// A case's paged cache tensor read as the values it stands for, exactly (fp64), one definition for
// the tools that look at a cache outside the kernels (the golden invariants, the audit's
// independent kernel): the element itself; fp8 code * k_scale / v_scale (per tensor or KV head);
// an integer code (code - zero_point) * scale with its group's parameters (kv_quant.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao::cases {

class CacheValues {
 public:
  /// `cache` is a contiguous cache tensor of case `c`; `scale` and `zero_point` its param tensors
  /// (an integer cache's; ignored otherwise).
  CacheValues(const Case& c, CacheTensor which, const Tensor& cache, const Tensor* scale = nullptr,
              const Tensor* zero_point = nullptr);

  double at(std::int64_t block, std::int32_t head, std::int32_t token, std::int32_t dim) const;
  /// The stored code or element, undecoded by any scale.
  double stored(std::int64_t block, std::int32_t head, std::int32_t token, std::int32_t dim) const {
    return stored_[static_cast<std::size_t>(layout_.offset(block, head, token, dim))];
  }
  const PagedCacheLayout& layout() const { return layout_; }

 private:
  const Case& c_;
  CacheTensor which_;
  PagedCacheLayout layout_;
  std::vector<double> stored_;
  bool integer_ = false;
  QuantParamLayout params_;
  std::vector<double> scale_, zero_point_;
};

}  // namespace pao::cases

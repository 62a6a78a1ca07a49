// The launch checks decode and prefix share (pao/cuda/attention_params.hpp): the lib's scalar
// rules, so a CUDA launch refuses exactly what the CPU kernels refuse.
#include "pao/cuda/attention_params.hpp"

#include <string>

#include "pao/core/error.hpp"
#include "pao/kernels/attention_options.hpp"
#include "status_of.hpp"

namespace pao::cuda {

Status check_attention_params(const PagedAttentionParams& p) {
  if (p.num_heads <= 0 || p.num_kv_heads <= 0)
    return Status::failure_of("num_heads = ", p.num_heads, ", num_kv_heads = ", p.num_kv_heads,
                              ": both must be positive");
  if (p.num_heads % p.num_kv_heads != 0)
    return Status::failure_of("num_heads = ", p.num_heads,
                              " is not a multiple of num_kv_heads = ", p.num_kv_heads);
  if (p.num_seqs > 0)
    if (Status s = detail::check_pointers(
            {{"key_cache", p.key_cache}, {"value_cache", p.value_cache}, {"block_tables", p.block_tables}});
        !s.ok())
      return s;
  if (is_integer_cache(p.kv_cache_dtype) && p.num_seqs > 0) {
    if (Status s = detail::check_pointers({{"key_cache_scale", p.key_quant.scale},
                                           {"key_cache_zero_point", p.key_quant.zero_point},
                                           {"value_cache_scale", p.value_quant.scale},
                                           {"value_cache_zero_point", p.value_quant.zero_point}},
                                          " (an integer cache needs its scales and zero points)");
        !s.ok())
      return s;
    for (const QuantTensorParams* q : {&p.key_quant, &p.value_quant})
      for (const DType d : {q->scale_dtype, q->zero_point_dtype})
        if (d != DType::f32 && d != DType::f16)
          return Status::failure_of("an integer cache's scale / zero point dtype ", dtype_name(d),
                                    ": f32 or f16 (kv_quant's)");
  }
  return detail::status_of([&] {
    check_attention_scalars(p.scale, p.soft_cap, p.sliding_window);
    if (is_fp8(p.kv_cache_dtype)) {  // per-head scales live on the device: the kernel reads them
      if (p.k_head_scales == nullptr) check_fp8_scale(p.k_scale, "k_scale");
      if (p.v_head_scales == nullptr) check_fp8_scale(p.v_scale, "v_scale");
    }
    require(p.block_table_stride >= 0, "block_table_stride = ", p.block_table_stride, ": must be >= 0");
  });
}

namespace detail {

Status check_same_as_plan(std::initializer_list<PlanField> fields) {
  for (const auto& f : fields)
    if (f.params != f.plan)
      return Status::failure_of(f.name, " = ", f.params, " but the plan was made for ", f.name, " = ",
                                f.plan);
  return {};
}

Status check_plan_grid(std::size_t num_ctas, std::int64_t x, std::int64_t y, std::int64_t z) {
  if (static_cast<std::int64_t>(num_ctas) != x * y * z)
    return Status::failure_of("plan: ", num_ctas, " CTAs for a grid of ", x, " x ", y, " x ", z);
  return {};
}

Status check_pointers(std::initializer_list<NamedPointer> pointers, const char* suffix) {
  for (const auto& n : pointers)
    if (n.ptr == nullptr) return Status::failure_of(n.name, ": null device pointer", suffix);
  return {};
}

Status check_grid_limits(std::int64_t y, const char* y_name, std::int64_t z, const char* z_name) {
  if (y > 65535) return Status::failure_of(y_name, " = ", y, ": more than the 65535 CTAs of grid y");
  if (z > 65535) return Status::failure_of(z_name, " = ", z, ": more than the 65535 CTAs of grid z");
  return {};
}

}  // namespace detail

}  // namespace pao::cuda

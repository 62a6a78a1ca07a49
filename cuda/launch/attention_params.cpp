// The launch checks decode and prefix share (pao/cuda/attention_params.hpp): the lib's scalar
// rules, so a CUDA launch refuses exactly what the CPU kernels refuse.
#include "pao/cuda/attention_params.hpp"

#include <string>

#include "pao/core/error.hpp"
#include "pao/kernels/attention_options.hpp"

namespace pao::cuda {

Status check_attention_params(const PagedAttentionParams& p) {
  try {
    check_attention_scalars(p.scale, p.soft_cap, p.sliding_window);
    if (is_fp8(p.kv_cache_dtype)) {  // per-head scales live on the device: the kernel reads them
      if (p.k_head_scales == nullptr) check_fp8_scale(p.k_scale, "k_scale");
      if (p.v_head_scales == nullptr) check_fp8_scale(p.v_scale, "v_scale");
    }
    require(p.block_table_stride >= 0, "block_table_stride = ", p.block_table_stride, ": must be >= 0");
  } catch (const Error& e) {
    return Status::failure(e.what());
  }
  return {};
}

}  // namespace pao::cuda

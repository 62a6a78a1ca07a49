// The rules of KernelTuning (pao/plan/kernel_tuning.hpp), written once.
#include "pao/plan/kernel_tuning.hpp"

#include "pao/core/error.hpp"

namespace pao {

namespace {

std::string value(std::int32_t v) { return "= " + std::to_string(v); }

}  // namespace

std::optional<TuningViolation> check_tuning(const KernelTuning& t, KernelVariant variant,
                                            std::int32_t block_size) {
  if (variant == KernelVariant::prefix || variant == KernelVariant::fallback) {
    if (t.block_m <= 0) return TuningViolation{"block_m", value(t.block_m) + ": must be positive"};
    if (t.block_n <= 0) return TuningViolation{"block_n", value(t.block_n) + ": must be positive"};
    if (t.context_tile <= 0)
      return TuningViolation{"context_tile", value(t.context_tile) + ": must be positive"};
    return std::nullopt;
  }
  if (t.warp_size <= 0 || (t.warp_size & (t.warp_size - 1)) != 0)
    return TuningViolation{"warp_size",
                           value(t.warp_size) + ": must be a power of two (32 NVIDIA, 64 BI-V100)"};
  if (t.threads_per_cta <= 0 || t.threads_per_cta % t.warp_size != 0)
    return TuningViolation{"threads_per_cta",
                           value(t.threads_per_cta) +
                               " is not a positive multiple of warp_size = " + std::to_string(t.warp_size)};
  if (variant == KernelVariant::v2 &&
      (t.partition_size <= 0 || block_size <= 0 || t.partition_size % block_size != 0))
    return TuningViolation{"partition_size",
                           value(t.partition_size) +
                               " is not a positive multiple of block_size = " + std::to_string(block_size)};
  return std::nullopt;
}

void require_tuning(const KernelTuning& t, KernelVariant variant, std::int32_t block_size) {
  if (const auto v = check_tuning(t, variant, block_size)) fail(v->field, " ", v->rule);
}

}  // namespace pao

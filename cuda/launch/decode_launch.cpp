// Checks of a decode launch and its sizes, all taken from the plan.
#include "pao/cuda/decode_launch.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "pao/core/error.hpp"
#include "pao/cuda/dispatch.hpp"
#include "status_of.hpp"

namespace pao::cuda {

namespace {

std::int32_t elem_bytes(DType t) { return static_cast<std::int32_t>(dtype_size(t)); }

bool multiple_of(std::int64_t v, std::int64_t n) { return v % n == 0; }

}  // namespace

Status plan_decode_launch(KernelVariant kernel, const DecodeParams& p, std::int32_t max_seq_len,
                          std::int32_t partition_size, std::span<const std::int32_t> host_seq_lens,
                          DecodePlan& plan) {
  const KernelTuning tuning{
      .partition_size = partition_size, .threads_per_cta = kThreadsPerCta, .warp_size = kWarpSize};
  const DecodeShape s{p, tuning, max_seq_len};  // max_seq_len 0: the plan takes the longest
  return detail::status_of([&] { plan = plan_decode(kernel, s, host_seq_lens); });
}

bool dims_vectorizable(const PagedCacheLayout& l, std::int32_t n, const void* base, std::size_t elem_bytes) {
  if (n <= 1) return true;
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  if (address % (static_cast<std::uintptr_t>(n) * elem_bytes) != 0) return false;
  if (!multiple_of(l.block_stride, n) || !multiple_of(l.head_stride, n) || !multiple_of(l.token_stride, n))
    return false;
  if (l.x <= 1) return l.dim_outer_stride == 1;
  return l.dim_inner_stride == 1 && l.x % n == 0 && multiple_of(l.dim_outer_stride, n);
}

bool tokens_vectorizable(const PagedCacheLayout& l, std::int32_t n, const void* base,
                         std::size_t elem_bytes) {
  if (n <= 1) return true;
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  if (address % (static_cast<std::uintptr_t>(n) * elem_bytes) != 0) return false;
  if (l.token_stride != 1) return false;
  if (!multiple_of(l.block_stride, n) || !multiple_of(l.head_stride, n) ||
      !multiple_of(l.dim_outer_stride, n))
    return false;
  return l.x <= 1 || multiple_of(l.dim_inner_stride, n);
}

Status make_decode_launch(const DecodeParams& p, const DecodePlan& plan, DecodeLaunch& launch) {
  // Supported values: the dispatcher is the one list (dispatch.hpp).
  const auto accept = [&]<auto...>() { return Status{}; };
  if (Status s = dispatch_dtypes(p.dtype, p.kv_cache_dtype, accept); !s.ok()) return s;
  if (Status s = dispatch_head_and_block(p.head_size, p.block_size, accept); !s.ok()) return s;

  if (p.num_seqs < 0) return Status::failure_of("num_seqs = ", p.num_seqs, ": must be >= 0");
  if (Status st = check_attention_params(p); !st.ok()) return st;
  const DecodeShape& s = plan.shape;
  if (Status st = detail::check_same_as_plan({{"num_seqs", p.num_seqs, s.num_seqs},
                                              {"num_heads", p.num_heads, s.num_heads},
                                              {"num_kv_heads", p.num_kv_heads, s.num_kv_heads},
                                              {"head_size", p.head_size, s.head_size},
                                              {"block_size", p.block_size, s.block_size},
                                              {"warp_size", kWarpSize, s.warp_size},
                                              {"threads_per_cta", kThreadsPerCta, s.threads_per_cta}});
      !st.ok())
    return st;
  const bool v2 = plan.kernel == KernelVariant::v2;
  if (Status st = detail::check_plan_grid(plan.ctas.size(), plan.grid_x, plan.grid_y, plan.grid_z); !st.ok())
    return st;
  if (p.num_seqs > 0) {
    if (Status st = detail::check_pointers({{"query", p.query}, {"seq_lens", p.seq_lens}, {"out", p.out}});
        !st.ok())
      return st;
    if (v2)
      if (Status st = detail::check_pointers(
              {{"tmp_out", p.tmp_out}, {"max_logits", p.max_logits}, {"exp_sums", p.exp_sums}}, " (V2)");
          !st.ok())
        return st;
  }
  if (Status st = detail::check_grid_limits(plan.grid_y, "num_seqs", plan.grid_z, "max_num_partitions");
      !st.ok())
    return st;

  launch = DecodeLaunch{};
  launch.kernel = plan.kernel;
  launch.attention.grid = {static_cast<std::uint32_t>(plan.grid_x), static_cast<std::uint32_t>(plan.grid_y),
                           static_cast<std::uint32_t>(plan.grid_z)};
  launch.attention.block = {static_cast<std::uint32_t>(s.threads_per_cta), 1, 1};
  launch.attention.dynamic_shared_bytes = plan.attention_shared_bytes;
  launch.partition_size = v2 ? s.partition_size : 0;
  launch.max_num_partitions = plan.max_num_partitions;
  if (v2) {
    launch.reduce.grid = {static_cast<std::uint32_t>(s.num_heads), static_cast<std::uint32_t>(s.num_seqs), 1};
    launch.reduce.block = {static_cast<std::uint32_t>(s.threads_per_cta), 1, 1};
    launch.reduce.dynamic_shared_bytes = plan.reduce_shared_bytes;
  }
  const DecodeGeometry g = DecodeGeometry::make(kWarpSize, kThreadsPerCta, p.block_size, elem_bytes(p.dtype));
  const std::size_t cache_bytes = dtype_size(p.kv_cache_dtype);
  launch.key_vector_loads = dims_vectorizable(p.key_layout, g.vec_size, p.key_cache, cache_bytes);
  launch.value_vector_loads = tokens_vectorizable(p.value_layout, g.v_vec_size, p.value_cache, cache_bytes);
  return {};
}

}  // namespace pao::cuda

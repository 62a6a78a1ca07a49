// Checks of a decode launch and its sizes, all taken from the plan.
#include "pao/cuda/decode_launch.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "pao/core/error.hpp"
#include "pao/cuda/dispatch.hpp"

namespace pao::cuda {

namespace {

template <typename... Parts>
Status fail_with(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Status::failure(os.str());
}

std::int32_t elem_bytes(DType t) { return static_cast<std::int32_t>(dtype_size(t)); }

bool multiple_of(std::int64_t v, std::int64_t n) { return v % n == 0; }

}  // namespace

Status plan_decode_launch(DecodeKernel kernel, const DecodeParams& p, std::int32_t max_seq_len,
                          std::int32_t partition_size, std::span<const std::int32_t> host_seq_lens,
                          DecodePlan& plan) {
  DecodeShape s;
  s.num_seqs = p.num_seqs;
  s.num_heads = p.num_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_size = p.head_size;
  s.block_size = p.block_size;
  s.partition_size = partition_size;
  s.threads_per_cta = kThreadsPerCta;
  s.warp_size = kWarpSize;
  std::int32_t longest = 0;
  for (auto len : host_seq_lens) longest = len > longest ? len : longest;
  s.max_seq_len = max_seq_len > 0 ? max_seq_len : longest;
  try {
    plan = plan_decode(kernel, s, host_seq_lens);
  } catch (const Error& e) {
    return Status::failure(e.what());
  }
  return {};
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

  if (p.num_seqs < 0) return fail_with("num_seqs = ", p.num_seqs, ": must be >= 0");
  if (p.num_heads <= 0 || p.num_kv_heads <= 0)
    return fail_with("num_heads = ", p.num_heads, ", num_kv_heads = ", p.num_kv_heads,
                     ": both must be positive");
  if (p.num_heads % p.num_kv_heads != 0)
    return fail_with("num_heads = ", p.num_heads, " is not a multiple of num_kv_heads = ", p.num_kv_heads);

  const DecodeShape& s = plan.shape;
  const struct {
    const char* name;
    std::int64_t params, plan;
  } same[] = {{"num_seqs", p.num_seqs, s.num_seqs},
              {"num_heads", p.num_heads, s.num_heads},
              {"num_kv_heads", p.num_kv_heads, s.num_kv_heads},
              {"head_size", p.head_size, s.head_size},
              {"block_size", p.block_size, s.block_size},
              {"warp_size", kWarpSize, s.warp_size},
              {"threads_per_cta", kThreadsPerCta, s.threads_per_cta}};
  for (const auto& f : same)
    if (f.params != f.plan)
      return fail_with(f.name, " = ", f.params, " but the plan was made for ", f.name, " = ", f.plan);
  const bool v2 = plan.kernel == DecodeKernel::v2;
  if (static_cast<std::int64_t>(plan.ctas.size()) !=
      static_cast<std::int64_t>(plan.grid_x) * plan.grid_y * plan.grid_z)
    return fail_with("plan: ", plan.ctas.size(), " CTAs for a grid of ", plan.grid_x, " x ", plan.grid_y,
                     " x ", plan.grid_z);

  if (p.num_seqs > 0) {
    const struct {
      const char* name;
      const void* ptr;
    } needed[] = {{"query", p.query},
                  {"key_cache", p.key_cache},
                  {"value_cache", p.value_cache},
                  {"block_tables", p.block_tables},
                  {"seq_lens", p.seq_lens},
                  {"out", p.out}};
    for (const auto& n : needed)
      if (n.ptr == nullptr) return fail_with(n.name, ": null device pointer");
    if (v2) {
      if (p.tmp_out == nullptr) return fail_with("tmp_out: null device pointer (V2)");
      if (p.max_logits == nullptr) return fail_with("max_logits: null device pointer (V2)");
      if (p.exp_sums == nullptr) return fail_with("exp_sums: null device pointer (V2)");
    }
  }
  if (Status st = check_attention_params(p); !st.ok()) return st;

  // CUDA's grid limits: x < 2^31, y and z <= 65535.
  if (plan.grid_y > 65535)
    return fail_with("num_seqs = ", plan.grid_y, ": more than the 65535 CTAs of grid y");
  if (plan.grid_z > 65535)
    return fail_with("max_num_partitions = ", plan.grid_z, ": more than the 65535 CTAs of grid z");

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

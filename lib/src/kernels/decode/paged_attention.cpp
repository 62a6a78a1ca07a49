// Entry points of the decode kernels: validate, plan, execute the plan's CTAs (grouped by KV
// head, in parallel over independent groups) and assemble the output tensors.
#include "pao/kernels/paged_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/decode/decode_partition.hpp"
#include "kernels/decode/decode_problem.hpp"
#include "kernels/decode/decode_reduce.hpp"
#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/decode_plan.hpp"

namespace pao {

namespace detail {

void check_kernel_geometry(const KernelTuning& c) {
  require(c.warp_size == 32 || c.warp_size == 64, "kernel precision: warp_size = ", c.warp_size,
          " (supported: 32, 64)");
  require(c.threads_per_cta >= c.warp_size && c.threads_per_cta % c.warp_size == 0 &&
              ((c.threads_per_cta / c.warp_size) & (c.threads_per_cta / c.warp_size - 1)) == 0,
          "kernel precision: threads_per_cta = ", c.threads_per_cta,
          " must be a power-of-two number of warps of ", c.warp_size);
}

}  // namespace detail

namespace {

using detail::DecodeProblem;

DecodeGeometry checked_geometry(const DecodeProblem& p, const KernelTuning& c) {
  detail::check_kernel_geometry(c);
  const std::int32_t bs = p.kv.block_size;
  require(bs >= 8 && (bs & (bs - 1)) == 0, "key_cache: block_size = ", bs,
          ": the kernel precision needs a power of two >= 8 (vLLM's V vectors)");
  const auto g = DecodeGeometry::make(c.warp_size, c.threads_per_cta, bs,
                                      static_cast<std::int32_t>(dtype_size(p.dtype)));
  require(p.head_size % g.dims_per_step == 0, "query: head_size = ", p.head_size, " is not a multiple of ",
          g.dims_per_step, " (thread group size x vector size for block_size ", bs, ", warp ", c.warp_size,
          ")");
  require(g.v_row_fits_warp(), "key_cache: block_size = ", bs, " needs ", g.v_vecs_per_row,
          " lanes per V row, more than a warp of ", c.warp_size);
  return g;
}

/// Work groups: the plan lists CTAs head-fastest, so the G heads of one KV head are adjacent.
struct Executor {
  const DecodeProblem& p;
  const DecodePlan& plan;
  Precision precision;
  DecodeGeometry geo;

  std::int32_t G() const { return p.queries_per_kv(); }
  std::size_t num_groups() const { return plan.ctas.size() / static_cast<std::size_t>(G()); }

  /// Calls emit(cta_of_head_0, out[G][hs], max[G], sum[G]) for every non-empty group.
  template <typename T, typename Emit>
  void run(Emit emit) const {
    const std::int64_t groups = static_cast<std::int64_t>(num_groups());
    const std::int32_t hs = p.head_size;
#pragma omp parallel
    {
      std::vector<T> out(static_cast<std::size_t>(G()) * hs), mx(static_cast<std::size_t>(G())),
          sum(static_cast<std::size_t>(G()));
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t i = 0; i < groups; ++i) {
        const AttentionCta& cta = plan.ctas[static_cast<std::size_t>(i) * G()];
        if (cta.empty()) continue;
        const detail::PartitionTask task{cta.seq, cta.head / G(), cta.token_begin, cta.token_end};
        if constexpr (std::is_same_v<T, double>)
          detail::run_partition_exact(p, task, {out.data(), mx.data(), sum.data()});
        else
          detail::run_partition_kernel(p, geo, task, {out.data(), mx.data(), sum.data()});
        emit(cta, out.data(), mx.data(), sum.data());
      }
    }
  }
};

std::size_t out_index(const DecodeProblem& p, std::int32_t seq, std::int32_t head) {
  return (static_cast<std::size_t>(seq) * p.num_heads + head) * p.head_size;
}

void store(DType dtype, const double* src, Tensor& t, std::size_t offset, std::size_t n) {
  encode_from_f64(dtype, src, t.bytes() + offset * dtype_size(dtype), n);
}
void store(DType dtype, const float* src, Tensor& t, std::size_t offset, std::size_t n) {
  encode_from_f32(dtype, src, t.bytes() + offset * dtype_size(dtype), n);
}

DecodeOutputs run_decode(KernelVariant kernel, const DecodeArgs& args, Precision precision,
                         const KernelTuning& tuning) {
  const DecodeProblem p = detail::make_decode_problem(args);
  const DecodeGeometry geo = precision == Precision::kernel ? checked_geometry(p, tuning) : DecodeGeometry{};
  const DecodePlan plan = plan_decode(kernel, p.shape(tuning), p.seq_lens);
  const Executor ex{p, plan, precision, geo};
  const std::int32_t hs = p.head_size, P = plan.max_num_partitions, G = ex.G();
  const bool v2 = kernel == KernelVariant::v2;
  const bool exact = precision == Precision::exact;

  DecodeOutputs o;
  o.out = Tensor(p.dtype, {p.num_seqs, p.num_heads, hs});
  if (exact) o.out_f64 = Tensor(DType::f64, {p.num_seqs, p.num_heads, hs});
  if (!v2) {
    auto emit = [&](const AttentionCta& cta, const auto* out, const auto*, const auto*) {
      const std::size_t at = out_index(p, cta.seq, cta.head);
      store(p.dtype, out, o.out, at, static_cast<std::size_t>(G) * hs);
      if (exact) store(DType::f64, out, o.out_f64, at, static_cast<std::size_t>(G) * hs);
    };
    if (exact)
      ex.run<double>(emit);
    else
      ex.run<float>(emit);
    return o;
  }

  const Shape part_shape{p.num_seqs, p.num_heads, P};
  o.tmp_out = Tensor(p.dtype, {p.num_seqs, p.num_heads, P, hs});
  o.max_logits = Tensor::filled(DType::f32, part_shape, -std::numeric_limits<double>::infinity());
  o.exp_sums = Tensor(DType::f32, part_shape);
  // Exact V2 keeps the fp64 partials, so that its output is the fp64 reduce of fp64 partials.
  std::vector<double> tmp64, max64, sum64;
  if (exact) {
    tmp64.assign(static_cast<std::size_t>(o.tmp_out.numel()), 0.0);
    max64.assign(static_cast<std::size_t>(o.exp_sums.numel()), -std::numeric_limits<double>::infinity());
    sum64.assign(static_cast<std::size_t>(o.exp_sums.numel()), 0.0);
  }
  auto emit = [&](const AttentionCta& cta, const auto* out, const auto* mx, const auto* sum) {
    for (std::int32_t g = 0; g < G; ++g) {
      const std::size_t row =
          (static_cast<std::size_t>(cta.seq) * p.num_heads + cta.head + g) * P + cta.partition;
      store(p.dtype, out + static_cast<std::size_t>(g) * hs, o.tmp_out, row * hs,
            static_cast<std::size_t>(hs));
      store(DType::f32, mx + g, o.max_logits, row, 1);
      store(DType::f32, sum + g, o.exp_sums, row, 1);
      if (exact) {
        std::copy(out + static_cast<std::size_t>(g) * hs, out + static_cast<std::size_t>(g + 1) * hs,
                  tmp64.begin() + static_cast<std::ptrdiff_t>(row * hs));
        max64[row] = static_cast<double>(mx[g]);
        sum64[row] = static_cast<double>(sum[g]);
      }
    }
  };
  if (exact)
    ex.run<double>(emit);
  else
    ex.run<float>(emit);

  // The reduce kernel, one CTA per (seq, head).
  const std::int64_t n_reduce = static_cast<std::int64_t>(plan.reduce_ctas.size());
#pragma omp parallel
  {
    std::vector<double> out64(static_cast<std::size_t>(hs));
    std::vector<float> tmp32, mx32(static_cast<std::size_t>(P)), sum32(static_cast<std::size_t>(P)),
        out32(static_cast<std::size_t>(hs));
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t i = 0; i < n_reduce; ++i) {
      const ReduceCta& rc = plan.reduce_ctas[static_cast<std::size_t>(i)];
      const std::size_t row0 = (static_cast<std::size_t>(rc.seq) * p.num_heads + rc.head) * P;
      const std::size_t at = out_index(p, rc.seq, rc.head);
      if (exact) {
        detail::reduce_exact(tmp64.data() + row0 * hs, max64.data() + row0, sum64.data() + row0,
                             rc.num_partitions, hs, out64.data());
        store(p.dtype, out64.data(), o.out, at, static_cast<std::size_t>(hs));
        store(DType::f64, out64.data(), o.out_f64, at, static_cast<std::size_t>(hs));
      } else {
        // The reduce reads the stored (rounded) partials, as the GPU does.
        tmp32.resize(static_cast<std::size_t>(rc.num_partitions) * hs);
        decode_to_f32(p.dtype, o.tmp_out.bytes() + row0 * hs * dtype_size(p.dtype), tmp32.data(),
                      tmp32.size());
        decode_to_f32(DType::f32, o.max_logits.bytes() + row0 * 4, mx32.data(),
                      static_cast<std::size_t>(rc.num_partitions));
        decode_to_f32(DType::f32, o.exp_sums.bytes() + row0 * 4, sum32.data(),
                      static_cast<std::size_t>(rc.num_partitions));
        if (rc.num_partitions == 0)
          std::fill(out32.begin(), out32.end(), 0.0f);
        else
          detail::reduce_kernel(geo, tmp32.data(), mx32.data(), sum32.data(), rc.num_partitions, hs,
                                out32.data());
        store(p.dtype, out32.data(), o.out, at, static_cast<std::size_t>(hs));
      }
    }
  }
  return o;
}

}  // namespace

DecodeOutputs paged_attention_v1(const DecodeArgs& args, Precision precision, const KernelTuning& tuning) {
  return run_decode(KernelVariant::v1, args, precision, tuning);
}

DecodeOutputs paged_attention_v2(const DecodeArgs& args, Precision precision, const KernelTuning& tuning) {
  return run_decode(KernelVariant::v2, args, precision, tuning);
}

}  // namespace pao

// Entry point of the prefix kernel: validate, plan, execute the plan's non-empty CTAs (grouped by
// KV head, in parallel over independent groups) and assemble the output.
#include "pao/kernels/prefix_attention.hpp"

#include <algorithm>
#include <vector>

#include "kernels/prefix/prefix_cta.hpp"
#include "kernels/prefix/prefix_problem.hpp"
#include "pao/numerics/element.hpp"

namespace pao {

namespace {

/// The CTAs of head 0 of each KV-head group, non-empty ones only, largest first (for load balance;
/// the result does not depend on the order).
std::vector<const PrefixCta*> work_items(const detail::PrefixProblem& p) {
  const std::int32_t G = p.queries_per_kv();
  std::vector<const PrefixCta*> items;
  for (const PrefixCta& cta : p.plan.ctas)
    if (cta.head % G == 0 && !cta.empty()) items.push_back(&cta);
  auto cost = [](const PrefixCta* c) {
    return static_cast<std::int64_t>(c->num_rows()) * (c->context_keys + c->new_keys + 1);
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const PrefixCta* a, const PrefixCta* b) { return cost(a) > cost(b); });
  return items;
}

}  // namespace

PrefixOutputs prefix_attention(const PrefixArgs& args, Precision precision, const KernelTuning& tuning) {
  const detail::PrefixProblem p = detail::make_prefix_problem(args, tuning);
  const bool exact = precision == Precision::exact;
  const std::int32_t hs = p.head_size, G = p.queries_per_kv();
  PrefixOutputs o;
  o.out = Tensor(p.dtype, {p.num_tokens, p.num_heads, hs});
  if (exact) o.out_f64 = Tensor(DType::f64, {p.num_tokens, p.num_heads, hs});

  const std::vector<const PrefixCta*> items = work_items(p);
  const auto n_items = static_cast<std::int64_t>(items.size());
  const std::size_t es = dtype_size(p.dtype);
#pragma omp parallel
  {
    std::vector<double> out64;
    std::vector<float> out32;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t w = 0; w < n_items; ++w) {
      const PrefixCta& cta = *items[static_cast<std::size_t>(w)];
      const std::int32_t rows = cta.num_rows();
      const std::size_t n = static_cast<std::size_t>(G) * rows * hs;
      if (exact) {
        out64.resize(n);
        detail::run_prefix_cta_exact(p, cta, out64.data());
      } else {
        out32.resize(n);
        detail::run_prefix_cta_kernel(p, cta, out32.data());
      }
      for (std::int32_t g = 0; g < G; ++g) {
        for (std::int32_t i = 0; i < rows; ++i) {
          const std::size_t src = (static_cast<std::size_t>(g) * rows + i) * hs;
          const std::size_t token = static_cast<std::size_t>(cta.token_offset) + cta.query_begin + i;
          const std::size_t dst = (token * p.num_heads + cta.head + g) * hs;
          if (exact) {
            encode_from_f64(p.dtype, out64.data() + src, o.out.bytes() + dst * es,
                            static_cast<std::size_t>(hs));
            std::copy(out64.data() + src, out64.data() + src + hs, o.out_f64.data<double>() + dst);
          } else {
            encode_from_f32(p.dtype, out32.data() + src, o.out.bytes() + dst * es,
                            static_cast<std::size_t>(hs));
          }
        }
      }
    }
  }
  return o;
}

}  // namespace pao

// The write_and_attend kind: the new tokens' K / V written into the paged cache and attended in
// one call — OpenVINO's PagedAttentionExtension, vLLM's CPU backends, many serving stacks' fused
// prefill. What it computes is vLLM's reshape_and_cache followed by context_attention_fwd; its
// golden holds the caches before (inputs) and after (outputs, judged bit for bit like
// reshape_and_cache's, an integer cache's written scales and zero points too) beside the
// attention outputs.
#include "kinds/cache_outputs.hpp"
#include "kinds/kind_helpers.hpp"
#include "kinds/kind_registry.hpp"
#include "kinds/prefix_step.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/prefix_attention.hpp"

namespace pao::kinds::detail {

namespace {

constexpr std::string_view kKernelOutput = "write_and_attend.out";
constexpr std::string_view kFields[] = {"block_m", "block_n", "context_tile", "max_query_len",
                                        "new_kv_source"};
constexpr auto kInputs = names_of(kWriteAndAttendInputs);  // pao/kinds/golden_tensor_lists.hpp
using J = OutputSpec::Judged;
constexpr std::string_view kOutAliases[] = {"output", "o"};
// The attention's outputs, then the written caches (kinds/cache_outputs.hpp).
constexpr auto kOutputs = concat(std::array<OutputSpec, 3>{{
                                     {"out", kOutAliases, RowLayout::per_token, J::final_output, "exact"},
                                     {"out_exact", {}, RowLayout::per_token, J::exact_reference, "exact"},
                                     {kKernelOutput, {}, RowLayout::per_token, J::final_output, "prefix"},
                                 }},
                                 kCacheOutputs);
constexpr auto kVendorOutputs = concat(std::array<std::string_view, 1>{kKernelOutput}, kCacheOutputNames);

/// The outputs of `names` of a written step: the attention's and the caches after the write.
NamedTensors written_step_outputs(cases::PrefixCase& step, const std::vector<std::string>& names) {
  NamedTensors t = prefix_step_outputs(step, names, kKernelOutput);
  for (const auto& cache : kWrittenStepCaches)
    if (wanted(names, cache.name) && golden_tensor_applies(step.spec, cache.name))
      t.emplace_back(cache.name, std::move(cache.of(step)));
  return t;
}

class WriteAndAttendKind final : public PrefixStepKind {
 public:
  WriteAndAttendKind()
      : PrefixStepKind(KindTraits{.id = cases::CaseKernel::write_and_attend,
                                  .name = "write_and_attend",
                                  .vllm_op = "reshape_and_cache + context_attention_fwd",
                                  .fields = kFields,
                                  .inputs = kInputs,
                                  .outputs = kOutputs,
                                  .vendor_outputs = kVendorOutputs}) {}

  std::string describe(const cases::Case& c) const override {
    return ", " + std::to_string(c.num_tokens()) + " tokens written and attended" + describe_prefix_step(c);
  }

  void build_golden(const cases::Case& c, const std::vector<std::string>& outputs,
                    golden::GoldenTensors& g) const override {
    cases::WriteAndAttendCase w = cases::make_write_and_attend_case(c);
    add_golden_tensors(c, w, kWriteAndAttendInputs, written_step_outputs(w.step, outputs), g.tensors);
  }

  NamedTensors compute_outputs_as(const cases::Case& c, const golden::GoldenTensors& g,
                                  const std::vector<std::string>& names) const override {
    cases::WriteAndAttendCase w = golden::write_and_attend_case_of(g);
    static_cast<KernelTuning&>(w.step.spec) = c;  // the tiles of `c`; the write is the golden's
    return written_step_outputs(w.step, names);
  }

  NamedTensors run(const cases::Case& c, Precision precision) const override {
    cases::WriteAndAttendCase w = cases::make_write_and_attend_case(c);
    NamedTensors out;
    out.emplace_back(kKernelOutput, std::move(prefix_attention(w.step.args(), precision, c).out));
    std::vector<std::string> caches;
    for (const auto& o : kOutputs)
      if (o.judged == J::cache) caches.emplace_back(o.name);
    for (auto& named : written_step_outputs(w.step, caches)) out.push_back(std::move(named));
    return out;
  }

  Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange& change) const override {
    return prefix_step_exact_with(golden::write_and_attend_case_of(g).step, change, g.golden_case);
  }

  double estimated_cost(const cases::Case& c) const override {
    const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
    double writes = 0;
    for (auto q : c.query_lens) writes += 2.0 * q * kv_width;  // the write, and the copy of the caches
    return prefix_step_attention_cost(c) + writes;
  }
};

}  // namespace

const KernelKind& write_and_attend_kind() {
  static const WriteAndAttendKind kind;
  return kind;
}

}  // namespace pao::kinds::detail

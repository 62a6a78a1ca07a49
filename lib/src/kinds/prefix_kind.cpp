// The prefix kind: vLLM's context_attention_fwd (chunked prefill: new tokens attend to their
// cached context and, causally, to each other). Its case fields are the kernel's tiles and where
// it reads the new tokens' K/V.
#include "kinds/kind_helpers.hpp"
#include "kinds/kind_registry.hpp"
#include "kinds/prefix_step.hpp"
#include "kinds/typed_kind.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/prefix_attention.hpp"

namespace pao::kinds::detail {

namespace {

constexpr std::string_view kFields[] = {"block_m",       "block_n",          "context_tile",
                                        "max_query_len", "cache_new_tokens", "new_kv_source"};
constexpr auto kInputs = names_of(kPrefixInputs);  // pao/kinds/golden_tensor_lists.hpp
using J = OutputSpec::Judged;
constexpr std::string_view kOutAliases[] = {"output", "o"};  // o: context_attention_fwd's
constexpr OutputSpec kOutputs[] = {
    {"out", kOutAliases, RowLayout::per_token, J::final_output, "exact"},
    {"out_exact", {}, RowLayout::per_token, J::exact_reference, "exact"},
    {"prefix.out", {}, RowLayout::per_token, J::final_output, "prefix"},
};

constexpr std::string_view kVendorOutputs[] = {"prefix.out"};

NamedTensors prefix_outputs(const cases::PrefixCase& pc, const std::vector<std::string>& names) {
  return prefix_step_outputs(pc, names, "prefix.out");
}

class PrefixKind final : public TypedKind<PrefixStepKind, cases::PrefixCase, kPrefixInputs,
                                          &cases::make_prefix_case, &prefix_outputs> {
 public:
  PrefixKind()
      : TypedKind(KindTraits{.id = cases::CaseKernel::prefix,
                             .name = "prefix",
                             .vllm_op = "context_attention_fwd",
                             .fields = kFields,
                             .inputs = kInputs,
                             .outputs = kOutputs,
                             .vendor_outputs = kVendorOutputs}) {}

  std::string describe(const cases::Case& c) const override { return describe_prefix_step(c); }

  NamedTensors run(const cases::Case& c, Precision precision) const override {
    const cases::PrefixCase pc = cases::make_prefix_case(c);
    NamedTensors out;
    out.emplace_back("prefix.out", std::move(prefix_attention(pc.args(), precision, c).out));
    return out;
  }

  Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange& change) const override {
    return prefix_step_exact_with(golden::prefix_case_of(g), change, g.golden_case);
  }

  double estimated_cost(const cases::Case& c) const override { return prefix_step_attention_cost(c); }
};

}  // namespace

const KernelKind& prefix_kind() {
  static const PrefixKind kind;
  return kind;
}

}  // namespace pao::kinds::detail

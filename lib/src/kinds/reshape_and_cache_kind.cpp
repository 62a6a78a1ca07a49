// The reshape_and_cache kind: vLLM's cache write of a prefix step (query_lens new tokens per
// sequence, after its context, and padding rows of slot -1 that must not be written). No
// attention: its outputs are the written caches, judged bit for bit.
#include "kinds/cache_outputs.hpp"
#include "kinds/kind_helpers.hpp"
#include "kinds/kind_registry.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::kinds::detail {

namespace {

constexpr std::string_view kFields[] = {"padding_tokens"};
constexpr auto kInputs = names_of(kReshapeInputs);  // pao/kinds/golden_tensor_lists.hpp
// Its outputs are the written caches (kinds/cache_outputs.hpp), which its vendor writes too.
constexpr auto& kOutputs = kCacheOutputs;
constexpr auto& kVendorOutputs = kCacheOutputNames;

class ReshapeAndCacheKind final : public KernelKind {
 public:
  ReshapeAndCacheKind()
      : KernelKind(KindTraits{.id = cases::CaseKernel::reshape_and_cache,
                              .name = "reshape_and_cache",
                              .vllm_op = "reshape_and_cache",
                              .attends = false,
                              .new_tokens = true,
                              .any_head_size = true,
                              .fields = kFields,
                              .inputs = kInputs,
                              .outputs = kOutputs,
                              .vendor_outputs = kVendorOutputs}) {}

  std::string describe(const cases::Case& c) const override {
    return ", " + std::to_string(c.num_tokens()) + " tokens written + " + std::to_string(c.padding_tokens) +
           " padding";
  }

  void build_golden(const cases::Case& c, const std::vector<std::string>&,
                    golden::GoldenTensors& g) const override {
    cases::ReshapeCase rc = cases::make_reshape_case(c);
    move_tensors(c, rc, kReshapeInputs, g.tensors);
    move_tensors(c, rc, kReshapeWrites, g.tensors);
  }

  bool other_decomposition(cases::Case&) const override { return false; }

  NamedTensors run(const cases::Case& c, Precision) const override {  // a cache write has one precision
    cases::ReshapeCase rc = cases::make_reshape_case(c);
    NamedTensors out;
    move_tensors(c, rc, kReshapeWrites, out);
    return out;
  }

  NamedTensors compute_outputs_as(const cases::Case&, const golden::GoldenTensors& g,
                                  const std::vector<std::string>& names) const override {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
    fail("golden ", g.golden_case.id, ": a reshape_and_cache golden must hold its written caches; it lacks ",
         list);
  }

  Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange&) const override {
    fail("golden ", g.golden_case.id, ": a reshape_and_cache case has no attention output");
  }

  void write_metadata(const cases::Case& c, SafetensorsMetadata& m) const override {
    put(m, "query_lens", join(c.query_lens));
    put(m, "padding_tokens", std::to_string(c.padding_tokens));
  }

  double estimated_cost(const cases::Case& c) const override {
    const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
    double work = 0;
    for (auto q : c.query_lens) work += 2.0 * q * kv_width;  // the write, and the copy of the caches
    return work;
  }
};

}  // namespace

const KernelKind& reshape_and_cache_kind() {
  static const ReshapeAndCacheKind kind;
  return kind;
}

}  // namespace pao::kinds::detail

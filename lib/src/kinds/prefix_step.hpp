// What the two kinds that run a prefix step share (private to kinds/): prefix
// (context_attention_fwd over a cache that already holds the new tokens) and write_and_attend (the
// new tokens' write and that attention in one call). Their vLLM rules, metadata, outputs and cost
// are one definition here.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kinds/kind_helpers.hpp"
#include "pao/cases/case.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds::detail {

/// A kind that runs a prefix step: another decomposition (other tiles) and its metadata. Its
/// fields (the tiles, max_query_len, new_kv_source; prefix's cache_new_tokens) are rows of the case
/// schema that its KindTraits::fields list.
class PrefixStepKind : public KernelKind {
 public:
  /// `traits` with the step's facts filled in: it attends, takes new tokens and any head size,
  /// runs as the prefix kernel (or the fallback), under vLLM's rules for context_attention_fwd.
  explicit PrefixStepKind(KindTraits traits);

  bool other_decomposition(cases::Case& c) const final;
  void write_metadata(const cases::Case& c, SafetensorsMetadata& m) const final;
};

/// ", new K/V from the cache" or "": the step's words in cases::describe.
std::string describe_prefix_step(const cases::Case& c);

/// The attention outputs of `names`: out and out_exact (exact precision) and `kernel_output` (the
/// kernel precision's: prefix.out, write_and_attend.out) of the step `pc`.
NamedTensors prefix_step_outputs(const cases::PrefixCase& pc, const std::vector<std::string>& names,
                                 std::string_view kernel_output);

/// The step's exact output with the attention options and the new tokens' source changed by
/// `change` (KernelKind::exact_with).
Tensor prefix_step_exact_with(const cases::PrefixCase& step, const KernelKind::ConventionChange& change,
                              const KernelTuning& tuning);

/// The attention's multiply-adds (exact and kernel, causal).
double prefix_step_attention_cost(const cases::Case& c);

}  // namespace pao::kinds::detail

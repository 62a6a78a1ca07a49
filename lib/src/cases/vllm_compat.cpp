// pao/cases/vllm_compat.hpp: what vLLM's kernels drop from a case, by the rules of the case's kind
// (each says when it applies, why, and what vLLM computes instead).
#include "pao/cases/vllm_compat.hpp"

#include "pao/kinds/kernel_kind.hpp"

namespace pao::cases {

std::vector<std::string> vllm_incompatibilities(const Case& c) {
  std::vector<std::string> reasons;
  // A cache vLLM's kernels cannot hold, whatever the kind: nothing to drop, so vllm_faithful refuses it.
  if (c.integer_cache())
    reasons.push_back("vLLM's kernels have no integer KV cache (kv_cache_dtype " +
                      std::string(kv_cache_dtype_name(c)) + "; theirs is auto or fp8)");
  for (const VllmRule& rule : kinds::kind_of(c).traits().vllm_rules)
    if (rule.applies(c)) reasons.push_back(rule.reason(c));
  return reasons;
}

KernelFeatures kernel_features(const Case& c) {
  KernelFeatures f{c.sliding_window, c.soft_cap, c.new_kv_source};
  if (c.vllm_faithful)
    for (const VllmRule& rule : kinds::kind_of(c).traits().vllm_rules)
      if (rule.applies(c)) rule.drop(f);
  return f;
}

}  // namespace pao::cases

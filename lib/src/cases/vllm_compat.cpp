// pao/cases/vllm_compat.hpp: what vLLM's kernels drop from a case.
#include "pao/cases/vllm_compat.hpp"

#include <sstream>

namespace pao::cases {

std::vector<std::string> vllm_incompatibilities(const Case& c) {
  std::vector<std::string> reasons;
  auto add = [&](auto&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    reasons.push_back(os.str());
  };
  const bool prefix = c.kernel == CaseKernel::prefix;
  if (c.kernel == CaseKernel::decode && c.sliding_window > 0)
    add("vLLM's paged_attention_v1/v2 have no sliding window: they attend to every token "
        "(sliding_window ",
        c.sliding_window, " would be dropped)");
  if (prefix && c.alibi && c.sliding_window > 0)
    add("vLLM's context_attention_fwd runs every ALiBi case in _fwd_kernel_alibi, which has no "
        "sliding-window parameter (sliding_window ",
        c.sliding_window, " would be dropped)");
  if (c.soft_cap > 0)
    add("vLLM's ", prefix ? "context_attention_fwd takes" : "paged_attention_v1/v2 take",
        " no logits soft-cap (soft_cap ", c.soft_cap, " would be dropped)");
  // With a cache of the activation dtype the two sources hold the same values.
  if (prefix && c.new_kv_source == NewKVSource::cache && c.kv_cache_dtype != KVCacheDType::auto_dtype)
    add("vLLM's context_attention_fwd reads the new tokens from key / value, not from the quantised "
        "cache (new_kv_source \"cache\" is FlashAttention's, FlashInfer's and IPEX's convention)");
  return reasons;
}

KernelFeatures kernel_features(const Case& c) {
  KernelFeatures f{c.sliding_window, c.soft_cap, c.new_kv_source};
  if (!c.vllm_faithful) return f;
  const bool prefix = c.kernel == CaseKernel::prefix;
  if (!prefix || c.alibi) f.sliding_window = 0;
  f.soft_cap = 0.0;
  f.new_kv_source = NewKVSource::input;
  return f;
}

}  // namespace pao::cases

// pao/cases/vllm_compat.hpp: what vLLM's kernels drop from a case. One table: each rule says when it
// applies, why (with the case's values), and what vLLM computes instead.
#include "pao/cases/vllm_compat.hpp"

#include <functional>
#include <sstream>

namespace pao::cases {

namespace {

struct Rule {
  std::function<bool(const Case&)> applies;
  std::function<std::string(const Case&)> reason;
  std::function<void(KernelFeatures&)> drop;  // what vLLM's kernel computes instead
};

template <typename... Parts>
std::string text(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

bool is_prefix(const Case& c) { return c.kernel == CaseKernel::prefix; }

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {[](const Case& c) { return c.kernel == CaseKernel::decode && c.sliding_window > 0; },
       [](const Case& c) {
         return text(
             "vLLM's paged_attention_v1/v2 have no sliding window: they attend to every token "
             "(sliding_window ",
             c.sliding_window, " would be dropped)");
       },
       [](KernelFeatures& f) { f.sliding_window = 0; }},
      {[](const Case& c) { return is_prefix(c) && c.alibi && c.sliding_window > 0; },
       [](const Case& c) {
         return text(
             "vLLM's context_attention_fwd runs every ALiBi case in _fwd_kernel_alibi, which has no "
             "sliding-window parameter (sliding_window ",
             c.sliding_window, " would be dropped)");
       },
       [](KernelFeatures& f) { f.sliding_window = 0; }},
      {[](const Case& c) { return c.soft_cap > 0; },
       [](const Case& c) {
         return text("vLLM's ", is_prefix(c) ? "context_attention_fwd takes" : "paged_attention_v1/v2 take",
                     " no logits soft-cap (soft_cap ", c.soft_cap, " would be dropped)");
       },
       [](KernelFeatures& f) { f.soft_cap = 0.0; }},
      // With a cache of the activation dtype the two sources hold the same values.
      {[](const Case& c) {
         return is_prefix(c) && c.new_kv_source == NewKVSource::cache &&
                c.kv_cache_dtype != KVCacheDType::auto_dtype;
       },
       [](const Case&) {
         return std::string(
             "vLLM's context_attention_fwd reads the new tokens from key / value, not from the quantised "
             "cache (new_kv_source \"cache\" is FlashAttention's, FlashInfer's and IPEX's convention)");
       },
       [](KernelFeatures& f) { f.new_kv_source = NewKVSource::input; }},
  };
  return r;
}

}  // namespace

std::vector<std::string> vllm_incompatibilities(const Case& c) {
  std::vector<std::string> reasons;
  for (const Rule& rule : rules())
    if (rule.applies(c)) reasons.push_back(rule.reason(c));
  return reasons;
}

KernelFeatures kernel_features(const Case& c) {
  KernelFeatures f{c.sliding_window, c.soft_cap, c.new_kv_source};
  if (c.vllm_faithful)
    for (const Rule& rule : rules())
      if (rule.applies(c)) rule.drop(f);
  return f;
}

}  // namespace pao::cases

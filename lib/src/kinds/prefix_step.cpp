// The prefix step's shared hooks (kinds/prefix_step.hpp).
#include "kinds/prefix_step.hpp"

#include <algorithm>

#include "pao/core/excerpt.hpp"
#include "pao/kernels/prefix_attention.hpp"

namespace pao::kinds::detail {

namespace {

/// vLLM's context_attention_fwd (vllm/attention/ops/prefix_prefill.py).
constexpr cases::VllmRule kVllmRules[] = {
    {[](const cases::Case& c) { return c.alibi && c.sliding_window > 0; },
     [](const cases::Case& c) {
       return text(
           "vLLM's context_attention_fwd runs every ALiBi case in _fwd_kernel_alibi, which has no "
           "sliding-window parameter (sliding_window ",
           c.sliding_window, " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.sliding_window = 0; }},
    {[](const cases::Case& c) { return c.soft_cap > 0; },
     [](const cases::Case& c) {
       return text("vLLM's context_attention_fwd takes no logits soft-cap (soft_cap ", c.soft_cap,
                   " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.soft_cap = 0.0; }},
    // With a cache of the activation dtype the two sources hold the same values.
    {[](const cases::Case& c) { return c.new_kv_source == NewKVSource::cache && c.fp8_cache(); },
     [](const cases::Case&) {
       return std::string(
           "vLLM's context_attention_fwd reads the new tokens from key / value, not from the quantised "
           "cache (new_kv_source \"cache\" is FlashAttention's, FlashInfer's and IPEX's convention)");
     },
     [](cases::KernelFeatures& f) { f.new_kv_source = NewKVSource::input; }},
};

}  // namespace

std::string describe_prefix_step(const cases::Case& c) {
  return c.new_kv_source == NewKVSource::cache ? ", new K/V from the cache" : "";
}

namespace {
constexpr KernelVariant kStepVariants[] = {KernelVariant::prefix, KernelVariant::fallback};
KindTraits with_step_facts(KindTraits t) {
  t.attends = true;
  t.new_tokens = true;
  t.any_head_size = true;  // vLLM's Triton kernel pads the head
  t.vllm_rules = kVllmRules;
  t.variants = kStepVariants;
  return t;
}
}  // namespace

PrefixStepKind::PrefixStepKind(KindTraits traits) : KernelKind(with_step_facts(traits)) {}

NamedTensors prefix_step_outputs(const cases::PrefixCase& pc, const std::vector<std::string>& names,
                                 std::string_view kernel_output) {
  const KernelTuning& tuning = pc.spec;
  NamedTensors t;
  if (wanted(names, "out") || wanted(names, "out_exact")) {
    PrefixOutputs exact = prefix_attention(pc.args(), Precision::exact, tuning);
    if (wanted(names, "out")) t.emplace_back("out", std::move(exact.out));
    if (wanted(names, "out_exact")) t.emplace_back("out_exact", std::move(exact.out_f64));
  }
  if (wanted(names, kernel_output))
    t.emplace_back(std::string(kernel_output),
                   std::move(prefix_attention(pc.args(), Precision::kernel, tuning).out));
  return t;
}

bool PrefixStepKind::other_decomposition(cases::Case& c) const {
  c.block_m = std::max(16, c.block_m / 2);  // other tiles, the same out
  c.block_n = std::max(16, c.block_n / 2);
  return true;
}

void PrefixStepKind::write_metadata(const cases::Case& c, SafetensorsMetadata& m) const {
  put(m, "query_lens", join(c.query_lens));
  put(m, "block_m", std::to_string(c.block_m));
  put(m, "block_n", std::to_string(c.block_n));
  put(m, "context_tile", std::to_string(c.context_tile));
  put(m, "new_kv_source", new_kv_source_name(cases::kernel_features(c).new_kv_source));
}

Tensor prefix_step_exact_with(const cases::PrefixCase& step, const KernelKind::ConventionChange& change,
                              const KernelTuning& tuning) {
  PrefixArgs a = step.args();
  change(a.options, a.new_kv_source);
  return prefix_attention(a, Precision::exact, tuning).out_f64;
}

double prefix_step_attention_cost(const cases::Case& c) {
  const double width = static_cast<double>(c.num_heads) * c.head_size;
  double work = 0;
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
    const double q = c.query_lens[s];
    work += 2.0 * q * (c.seq_lens[s] - q / 2) * width;  // exact and kernel, causal
  }
  return work;
}

}  // namespace pao::kinds::detail

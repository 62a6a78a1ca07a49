// Where a case asks for something vLLM's own kernels do not compute, and what they compute instead.
// Each kernel kind lists its rules (pao/kinds/kernel_kind.hpp, KindTraits::vllm_rules):
//   decode + sliding_window: vLLM's paged_attention_v1/v2 (csrc/attention) take no window; they
//     attend to every token of the sequence.
//   prefix + ALiBi + sliding_window: vLLM's context_attention_fwd (prefix_prefill.py) sends every
//     ALiBi call to _fwd_kernel_alibi, which has no sliding-window parameter: the window is dropped.
//   soft_cap: neither paged_attention_v1/v2 nor context_attention_fwd takes a logits soft-cap.
//   prefix + new_kv_source "cache" + fp8 cache: context_attention_fwd reads the new tokens from
//     key / value, unquantised (with a cache of the activation dtype both sources agree).
// pao computes what the case says (the semantics of FlashAttention, FlashInfer, IPEX); such a
// golden records vllm_compatible false with these reasons. A case with vllm_faithful true computes
// what vLLM's kernels compute instead: the features they drop are off (kernel_features).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/cases/case.hpp"

namespace pao::cases {

/// One sentence per feature of `c` that vLLM's kernels drop or cannot take, with the case's values
/// ("vLLM's paged_attention_v1/v2 have no sliding window (sliding_window 100 ...)"). Empty: vLLM
/// computes what the case says. Describes the case as written, vllm_faithful or not.
std::vector<std::string> vllm_incompatibilities(const Case& c);

/// The features the kernels apply to `c`: as written, or with vllm_faithful, as vLLM's kernels
/// apply them. Every builder of kernel arguments from a case reads these, never the raw fields.
struct KernelFeatures {
  std::int32_t sliding_window = 0;
  double soft_cap = 0.0;
  NewKVSource new_kv_source = NewKVSource::input;
};
KernelFeatures kernel_features(const Case& c);

/// One way vLLM's op of a kind differs: when it applies, why (with the case's values), and what
/// vLLM computes instead.
struct VllmRule {
  bool (*applies)(const Case& c);
  std::string (*reason)(const Case& c);
  void (*drop)(KernelFeatures& f);
};

}  // namespace pao::cases

// The launch variants of pao's kernels: how a kernel kind (pao/kinds/) is computed on a GPU. The
// decode kind runs as V1 or V2 (+ reduce), the prefix kind as the K-tiled kernel or a framework's
// host-loop fallback; the plans decompose a variant into CTAs, the simulator times it, the CUDA
// launchers run it. One enum for all of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pao {

enum class KernelVariant : std::uint8_t {
  v1,        // vLLM paged_attention_v1: one CTA per (seq, head) walks the whole sequence
  v2,        // vLLM paged_attention_v2: one CTA per (seq, head, partition), then the reduce
  prefix,    // K-tiled prefix (chunked-prefill) attention, vLLM's context_attention_fwd
  fallback,  // a framework's fallback: a host loop over K tiles, a chain of small kernels per tile
};

/// "v1", "v2", "prefix", "fallback".
std::string to_string(KernelVariant variant);
/// The variant named `name`; false when there is none.
bool try_parse_kernel_variant(std::string_view name, KernelVariant& variant);

}  // namespace pao

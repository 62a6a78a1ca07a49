// The kernel kinds — decode (paged attention V1 / V2), prefix (chunked-prefill attention),
// reshape_and_cache and write_and_attend (the cache write fused with prefix attention) — each
// declared once, the way ggml's op table declares its ops: what a case of the kind holds (its
// fields, the vLLM op it mirrors), its tensors (inputs, outputs and how each is laid out and
// judged), how it runs (its launch variants), and the hooks that build its tensors, compute its
// outputs, write its fields and name it. Every tool loops over this table or asks a case's kind;
// nothing else switches on the kind (docs/architecture.md, "How to add a kernel kind").
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/tensor.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/plan/kernel_variant.hpp"

namespace pao::golden {
struct GoldenTensors;
}

namespace pao::kinds {

/// How an output's elements map to the paged structure (pao/diff/location.hpp's layouts).
enum class RowLayout : std::uint8_t {
  per_sequence,                // [num_seqs, num_heads, head_size]: decode's out
  per_sequence_partition_dim,  // [num_seqs, num_heads, max_num_partitions, head_size]: v2.tmp_out
  per_sequence_partition,      // [num_seqs, num_heads, max_num_partitions]: v2.max_logits, v2.exp_sums
  per_token,                   // [num_tokens, num_heads, head_size]: prefix's out
  cache,                       // a written KV cache: compared bit for bit
};

/// One output a golden of the kind holds.
struct OutputSpec {
  std::string_view name;  // "v2.tmp_out"
  /// Other names a vendor's file may give it (vLLM's argument names: tmp_out, exp_sum, output, o).
  std::span<const std::string_view> aliases;
  RowLayout layout;
  /// What `pao diff` compares a vendor's tensor of this name with: the final attention outputs
  /// (out, v1.out, v2.out, prefix.out) with out_exact, partials with the exact V2's, caches bit for bit.
  enum class Judged : std::uint8_t { final_output, partial, exact_reference, cache } judged;
  /// The `pao golden --outputs` group that keeps it (golden/output_selection.hpp); "" = always.
  std::string_view group;
};

/// A kind's row in the table of kinds, written with designated initialisers (`.attends = true`);
/// a member left out is false or empty.
struct KindTraits {
  cases::CaseKernel id;
  std::string_view name;       // the case JSON's "kernel"
  std::string_view vllm_op;    // "paged_attention_v1/v2", "context_attention_fwd", "reshape_and_cache"
  bool attends = false;        // queries and heads: attention options, out / out_exact, the flash rule
  bool new_tokens = false;     // query_lens: the new tokens of each sequence (rows of query / key / value)
  bool any_head_size = false;  // any head size (vLLM's Triton kernel pads it); else vLLM's decode list
  /// Where vLLM's op computes something else (vllm_compat.hpp).
  std::span<const cases::VllmRule> vllm_rules = {};
  std::span<const KernelVariant> variants = {};  // how it runs: the plans, the simulator, the CUDA kernels
  std::span<const std::string_view> fields;  // the schema's kind_declared fields it takes (case_schema.hpp)
  std::span<const std::string_view> inputs;  // golden inputs, in file order (alibi_slopes only with ALiBi)
  std::span<const OutputSpec> outputs;       // golden outputs, in file order
  /// The outputs the kind's vendor kernel writes (V2's out and partials, prefix.out, the caches):
  /// what the audit's vendors write, under their vendor names (vendor_name).
  std::span<const std::string_view> vendor_outputs;
};

/// The name a vendor's file gives an output: "out" for a final output, vLLM's argument name for
/// a partial (tmp_out), else its own.
std::string vendor_name(const OutputSpec& spec);

class KernelKind {
 public:
  explicit KernelKind(const KindTraits& traits) : traits_(traits) {}
  virtual ~KernelKind() = default;
  KernelKind(const KernelKind&) = delete;
  KernelKind& operator=(const KernelKind&) = delete;

  const KindTraits& traits() const { return traits_; }
  std::string_view name() const { return traits_.name; }
  /// The output spec of `name`, or nullptr.
  const OutputSpec* output(std::string_view name) const;
  bool runs_as(KernelVariant v) const;

  // ---- derived from what the kind declares (its variants and outputs), never declared twice --
  /// V2's partitions (partition_size, the partials, the reduce): the kind runs as V2.
  bool partitioned() const { return runs_as(KernelVariant::v2); }
  /// Its outputs include the caches it writes (key_cache_before in, key_cache out): an output
  /// laid out as a cache.
  bool writes_cache() const;
  /// The rows of its attention output: per_sequence (one query per sequence: decode) or per_token
  /// (a row per new token: prefix); nullopt for a kind without attention (reshape_and_cache).
  std::optional<RowLayout> attention_rows() const;

  // ---- the case model (pao/cases/) ---------------------------------------------------------
  /// The kind's words in cases::describe ("partition 512", "new K/V from the cache").
  virtual std::string describe(const cases::Case& c) const = 0;

  // ---- goldens (pao/golden/) ---------------------------------------------------------------
  /// The case's inputs, then the outputs of `outputs` (names of traits().outputs), each kernel run
  /// only when one of its outputs is asked for.
  virtual void build_golden(const cases::Case& c, const std::vector<std::string>& outputs,
                            golden::GoldenTensors& g) const = 0;
  /// The outputs `names` computed from a golden's inputs, as build_golden computes them. Throws
  /// pao::Error for a kind whose golden must hold its outputs.
  std::vector<std::pair<std::string, Tensor>> compute_outputs(const golden::GoldenTensors& g,
                                                              const std::vector<std::string>& names) const;
  /// The same from the golden's inputs for case `c` (the golden's case with its tuning or options
  /// changed: the audit's legitimate variants).
  virtual std::vector<std::pair<std::string, Tensor>> compute_outputs_as(
      const cases::Case& c, const golden::GoldenTensors& g, const std::vector<std::string>& names) const = 0;
  /// The case's seeded tensors through the kind's kernels in `precision`, under the golden's names
  /// of their outputs (v1.out, v2.out and the partials; prefix.out; the written caches).
  virtual std::vector<std::pair<std::string, Tensor>> run(const cases::Case& c,
                                                          Precision precision) const = 0;
  /// `c` decomposed another way that computes the same (V2 with twice the partition size, the
  /// prefix kernel with half its tiles): a legitimate implementation variant. False if the kind
  /// has no other decomposition.
  virtual bool other_decomposition(cases::Case& c) const = 0;
  /// An attention kind's exact output (out_f64) from a golden's inputs with the attention options
  /// and the new tokens' source changed by `change`: what a vendor that chose another convention
  /// computes (pao diff's matches-variant). Throws pao::Error for a kind without attention.
  using ConventionChange = std::function<void(AttentionOptions&, NewKVSource&)>;
  virtual Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange& change) const = 0;
  /// The kind's metadata keys of a golden (partition_size, query_lens, ...).
  virtual void write_metadata(const cases::Case& c, SafetensorsMetadata& m) const = 0;
  /// Relative work of a case (multiply-adds plus bytes written), for ETAs.
  virtual double estimated_cost(const cases::Case& c) const = 0;

  // ---- the kernel precision's numerics -----------------------------------------------------
  /// Whether the kernel rounds dequantised K / V of a quantised cache to half before using them
  /// (vLLM's decode kernel with vectors of 2+: fp8_dequant_through_half). The invariants' bound
  /// and the audit's independent kernel ask.
  struct DequantThroughHalf {
    bool key = false, value = false;
  };
  virtual DequantThroughHalf dequant_through_half(const cases::Case&) const { return {}; }

 private:
  KindTraits traits_;
};

/// Every kind, in the order of CaseKernel.
std::span<const KernelKind* const> kernel_kinds();
const KernelKind& kind_of(cases::CaseKernel kernel);
inline const KernelKind& kind_of(const cases::Case& c) { return kind_of(c.kernel); }
/// The kind named `name` ("decode"), or nullptr.
const KernelKind* find_kind(std::string_view name);
/// "\"decode\", \"prefix\" or \"reshape_and_cache\"": the kinds a case JSON may name.
std::string kind_names();

/// Whether a golden of case `c` holds its kind's input or output `name`: alibi_slopes only with
/// ALiBi, the scales and zero points (key_cache_scale, key_cache_scale_before, ...) only with an
/// integer cache, every other always.
bool golden_tensor_applies(const cases::Case& c, std::string_view name);

}  // namespace pao::kinds

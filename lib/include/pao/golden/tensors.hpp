// From a case to the tensors of its golden file: the seeded inputs, the exact outputs and the
// kernel-precision outputs, under the names of the tensor contract (DESIGN.md), and the
// `__metadata__` that describes the case. `--outputs` (output_selection.hpp) keeps a subset of
// the outputs; the metadata's "outputs" lists those held.
//
// decode: query key_cache value_cache block_tables seq_lens [alibi_slopes]
//         out (exact, rounded) out_exact (F64) v1.out v2.out v2.tmp_out v2.max_logits v2.exp_sums
// prefix: query key value key_cache value_cache block_tables seq_lens query_start_loc [alibi_slopes]
//         out (exact, rounded) out_exact (F64) prefix.out
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/golden/output_selection.hpp"
#include "pao/io/safetensors.hpp"

namespace pao::golden {

/// Version of the golden layout (tensor names, metadata keys); in every file's metadata.
inline constexpr const char* kGoldenFormatVersion = "1";

struct GoldenTensors {
  cases::Case golden_case;
  std::vector<std::pair<std::string, Tensor>> tensors;  // inputs first, then outputs
  SafetensorsMetadata metadata;

  NamedTensorViews views() const;
  const Tensor* find(std::string_view name) const;
};

/// Builds the inputs from the seed and runs the oracle (exact V1 plus kernel V1 and V2 for
/// decode; exact and kernel prefix) for the outputs `outputs` keeps; a kernel none of whose
/// outputs is kept is not run. Throws pao::Error for a case the kernels reject.
GoldenTensors make_golden(const cases::Case& c, const OutputSelection& outputs = {});

/// The `__metadata__` make_golden writes for case `c`: the case as JSON and, flat, every field a
/// harness reads (kernel, scale, sizes, dtypes, format_version, ...); `num_blocks` is the caches'
/// first dimension, `outputs` the outputs the file holds. `pao verify` checks a file's flat keys
/// against it.
SafetensorsMetadata golden_metadata(const cases::Case& c, std::int64_t num_blocks,
                                    const std::vector<std::string>& outputs);

/// The outputs of golden_output_names that `g` lacks (left out by `pao golden --outputs`).
std::vector<std::string> missing_outputs(const GoldenTensors& g);

/// The outputs `names` (of golden_output_names) computed from `g`'s inputs, as make_golden does.
std::vector<std::pair<std::string, Tensor>> compute_outputs(const GoldenTensors& g,
                                                            const std::vector<std::string>& names);

/// Computes the outputs `g` lacks from its inputs, as make_golden would have: afterwards `g`
/// holds every output. Throws pao::Error if an input is missing.
void complete_outputs(GoldenTensors& g);

/// The tensors `make_golden` computes, by kind.
const std::vector<std::string>& golden_input_names(cases::CaseKernel kernel);
const std::vector<std::string>& golden_output_names(cases::CaseKernel kernel);

/// Relative work of a case (multiply-adds of its kernels plus bytes written), for ETAs.
double estimated_cost(const cases::Case& c);

/// One term of estimated_peak_memory (before its factor of two): what it holds, the case field that
/// sizes it (what an error tells the user to lower) and its bytes.
struct MemoryTerm {
  std::string_view what;   // "the K/V caches"
  std::string_view field;  // "seq_lens", "padding_tokens", "extra_table_columns", ...
  double bytes = 0;
};
/// Every allocation make_golden sizes from the case's fields: the caches, the token rows and their
/// outputs, padding rows, block tables, the per-sequence lists, V2's partials. In doubles, so that
/// no field is too large to estimate.
std::vector<MemoryTerm> estimated_memory_terms(const cases::Case& c);

/// Bytes `make_golden(c)` and its writing hold at their peak, an upper estimate (the terms above,
/// twice over, plus 128 MB; the factor is measured, docs/golden.md "Memory").
double estimated_peak_memory(const cases::Case& c);

/// Throws pao::Error (pao/core/memory.hpp require_memory) when `concurrent` cases like `c` need more
/// than the memory limit, naming the case, its largest term and the field that sizes it.
/// make_golden calls it before it allocates anything.
void require_golden_memory(const cases::Case& c, int concurrent = 1);

/// Shortest decimal text that reads back as the same f32 (metadata values).
std::string format_f32(float v);

}  // namespace pao::golden

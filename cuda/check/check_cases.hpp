// The cases pao-cuda-check runs: built-in suites and a case file. Interim: when the shared
// case/suite files of `pao golden` (data/cases/, issue 4) land, these readers are replaced by
// that code; the harness only needs a list of CheckCase.
#pragma once

#include <string>
#include <vector>

#include "pao/decode_case.hpp"
#include "pao/prefix_case.hpp"

namespace pao::cuda::check {

enum class CheckKernel { decode, prefix };

struct CheckCase {
  std::string id;  // stable within a suite; names every reported tensor
  CheckKernel kernel = CheckKernel::decode;
  DecodeCaseSpec spec;    // decode: V1 and V2 (+ reduce) are both checked
  PrefixCaseSpec prefix;  // prefix
  /// Extension: per-KV-head fp8 scales (AttentionOptions::k_head_scales); empty = per-tensor.
  std::vector<float> k_head_scales, v_head_scales;
};

/// Built-in suites: "smoke" (seconds: every feature once, decode and prefix), "vllm" (every
/// compiled decode instantiation — head sizes x block sizes x dtypes x cache dtypes, vLLM's 7
/// sequences with random lengths, heads 40/40 and 64/8, ALiBi on and off — and every prefix
/// instantiation in mixed batches of context + new tokens). Throws pao::Error on an unknown name.
std::vector<CheckCase> suite_cases(const std::string& name);
std::vector<std::string> suite_names();

/// A case as JSON, with the field names of issue 4's case files:
///   kernel (decode|prefix), num_seqs, num_heads, num_kv_heads, head_size, block_size, dtype
///   (f32|f16|bf16), kv_cache_dtype (auto|fp8_e4m3|fp8_e5m2), k_scale, v_scale, alibi, soft_cap,
///   sliding_window, partition_size, seed, num_blocks, seq_lens (list) or max_seq_len (decode:
///   random lengths in [1, max], the last = max); prefix: query_lens (list; seq_lens = context +
///   query), block_m, block_n, context_tile, max_query_len
/// plus kv_layout (vllm|nhd), distribution, k_head_scales, v_head_scales, id. Unknown fields are
/// an error. Throws pao::Error naming the file and field.
CheckCase read_case_file(const std::string& path);
CheckCase parse_case_json(const std::string& text, const std::string& origin);

/// One line: id and every parameter.
std::string describe(const CheckCase& c);

}  // namespace pao::cuda::check

// Golden cases: one JSON object describes one decode or prefix case (docs/golden.md lists every
// field). Parsing is strict — an unknown field, a wrong type or an inconsistent value is a
// pao::Error naming the source and the field — and resolves every default to vLLM's, so a parsed
// case holds concrete values (seq_lens drawn from the seed when only max_seq_len was given).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pao/decode_case.hpp"
#include "pao/dtype.hpp"
#include "pao/paged_cache_layout.hpp"

namespace pao::golden {

enum class CaseKernel : std::uint8_t { decode, prefix };
std::string to_string(CaseKernel kernel);

struct GoldenCase {
  /// Stable id: given in the JSON, else derived from the parameters as written (case_id.cpp).
  std::string id;
  CaseKernel kernel = CaseKernel::decode;
  std::int32_t num_seqs = 0;
  std::int32_t num_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_size = 0;
  std::int32_t block_size = 16;
  DType dtype = DType::f16;
  /// "auto" resolves to dtype (kv_cache_auto stays true so the JSON round-trips as "auto").
  DType kv_cache_dtype = DType::f16;
  bool kv_cache_auto = true;
  KVLayout kv_layout = KVLayout::vllm;
  /// Scalars keep the double the JSON held; kernels get them as f32, as vLLM passes them.
  double k_scale = 1.0;
  double v_scale = 1.0;
  std::optional<double> scale;  // unset: 1 / sqrt(head_size)
  bool alibi = false;
  double soft_cap = 0.0;
  std::int32_t sliding_window = 0;
  std::int32_t partition_size = 512;  // decode (V2) only
  std::uint64_t seed = 0;
  std::int32_t num_blocks = 0;  // 0: the blocks the sequences need plus one spare per sequence
  /// Resolved: as given, or drawn from the seed (vLLM's test: uniform in [1, max], last = max).
  /// Prefix: context + new tokens of each sequence.
  std::vector<std::int32_t> seq_lens;
  /// Resolved: >= every seq_len. Decode: bounds V2's partitions (vLLM's max_seq_len).
  std::int32_t max_seq_len = 0;
  std::vector<std::int32_t> query_lens;  // prefix only: new tokens per sequence
  ValueDistribution distribution = ValueDistribution::uniform;
  /// The kernel precision's GPU model: 32 on NVIDIA, 64 on the BI-V100.
  std::int32_t warp_size = 32;
  std::int32_t threads_per_cta = 128;
  /// Prefix tiles (vLLM's BLOCK_M, BLOCK_N and the context tile of 32).
  std::int32_t block_m = 128;
  std::int32_t block_n = 64;
  std::int32_t context_tile = 32;
};

/// Parses one case. `source` names the input in errors ("cases/a.json"). Throws pao::Error.
GoldenCase parse_case(std::string_view json_text, std::string_view source);
GoldenCase load_case_file(const std::filesystem::path& path);

/// The resolved case as canonical JSON (keys sorted, every field present, "id" included):
/// parse_case(case_to_json(c)) == c. indent < 0: one line.
std::string case_to_json(const GoldenCase& c, int indent = -1);

/// The id derived from the parameters. Defaulted fields are left out; everything else is in,
/// so two different cases never share an id. e.g. decode-h40x40-d128-b16-f16-auto-alibi-n7-L2048-s0
std::string derive_case_id(const GoldenCase& c, bool seq_lens_given, bool max_seq_len_given);

/// One line for humans: "decode, 7 seqs (max 2048), heads 40/40, head_size 128, block 16, f16, ...".
std::string describe(const GoldenCase& c);

/// The f32 scale the kernels use.
float effective_scale(const GoldenCase& c);
/// V2's max_num_partitions: ceil(max_seq_len / partition_size) (1 for prefix cases).
std::int32_t max_num_partitions(const GoldenCase& c);
/// Every field name a case JSON may hold (the error for an unknown field lists them).
const std::vector<std::string_view>& case_field_names();

bool operator==(const GoldenCase& a, const GoldenCase& b);

}  // namespace pao::golden

// The one description of a case: a decode or prefix kernel call, with every shape, dtype, cache
// layout, length, option, scale, value distribution and seed that decides its tensors and outputs.
// `pao golden`, `pao diff`, `pao sim`, `pao-cuda-check`, `pao-bench` and the tests all take a
// Case; the same case and seed give the same tensors everywhere (make_decode_case /
// make_prefix_case in case_tensors.hpp).
//
// Its JSON form has one reader and one writer here, both driven by the case schema
// (pao/cases/case_schema.hpp: every field as a row; docs/golden.md's table is generated from it,
// and override_field is declared there). Parsing is
// strict — an unknown field, a wrong type or an inconsistent value is a pao::Error naming the
// source and the field — and resolves every default to vLLM's, so a parsed case holds concrete
// values (seq_lens drawn from the seed when only max_seq_len was given: draw_seq_lens).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pao/core/dtype.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "pao/plan/kernel_tuning.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::cases {

/// The kernel kind of a case, the index of the table of kinds (pao/kinds/kernel_kind.hpp, which
/// says everything else about each): decode (paged_attention_v1/v2), prefix
/// (context_attention_fwd), reshape_and_cache (the cache write of a prefix step, no attention),
/// write_and_attend (the write and the prefix attention in one call: OpenVINO's PagedAttention).
enum class CaseKernel : std::uint8_t { decode, prefix, reshape_and_cache, write_and_attend };
/// The kind's name ("decode").
std::string to_string(CaseKernel kernel);

/// How the values of query, K and V are drawn.
enum class ValueDistribution : std::uint8_t {
  uniform,         // vLLM's tests: uniform(-1/sqrt(head_size), 1/sqrt(head_size))
  large_logits,    // uniform(-4, 4): logits of tens, a peaked softmax
  near_ties,       // K rows nearly equal: logits within a few ulp of each other
  dominant_token,  // one token per sequence aligned with the query: p ~ 1 on it
  all_equal,       // every K row equal: a uniform softmax
  small_integers,  // small integers times a power of two: structural tests compare bit for bit
  constant,        // every query, K and V element 1/16, nothing drawn: timing long contexts
};
std::string to_string(ValueDistribution d);
ValueDistribution parse_value_distribution(const std::string& name);

/// Built in code, a Case starts as one decode sequence of one token, one head of 64, vLLM's
/// tuning: set what differs. parse_case resolves every field from the JSON instead.
struct Case : LaunchShape, KernelTuning {  // num_seqs, num_heads, num_kv_heads, head_size, block_size;
                                           // partition_size (decode), warp_size, threads_per_cta,
                                           // block_m, block_n, context_tile (prefix)
  Case() : LaunchShape{1, 1, 1, 64, 16} {}

  /// Stable id: given in the JSON, else derived from the parameters as written (derive_case_id).
  std::string id;
  CaseKernel kernel = CaseKernel::decode;
  DType dtype = DType::f16;  // query, key, value, out: f32, f16 or bf16
  /// vLLM's kv_cache_dtype: unset is "auto" (the caches store `dtype`), else a cache format of
  /// the dtype table (fp8_e4m3, fp8_e5m2; the integer u8, i8 with kv_quant).
  std::optional<DType> kv_cache_dtype;
  /// Integer caches: how K and V are quantised (pao/numerics/kv_quant.hpp); OpenVINO's by default.
  KVQuant kv_quant;
  KVLayout kv_layout = KVLayout::vllm;
  /// Scalars keep the double the JSON held; kernels get them as f32, as vLLM passes them.
  double k_scale = 1.0;
  double v_scale = 1.0;
  /// Extension: per-KV-head fp8 scales [num_kv_heads]; when given they replace k_scale / v_scale.
  std::vector<double> k_head_scales, v_head_scales;
  std::optional<double> scale;  // unset: 1 / sqrt(head_size)
  bool alibi = false;
  double soft_cap = 0.0;
  std::int32_t sliding_window = 0;
  std::uint64_t seed = 0;
  std::int32_t num_blocks = 0;  // 0: the blocks the sequences need plus one spare per sequence
  /// Resolved: as given, or drawn from the seed (draw_seq_lens). Prefix: context + new tokens.
  std::vector<std::int32_t> seq_lens{1};
  /// Resolved: >= every seq_len. Decode: bounds V2's partitions (vLLM's max_seq_len).
  std::int32_t max_seq_len = 0;
  std::vector<std::int32_t> query_lens;  // prefix only: new tokens per sequence
  ValueDistribution distribution = ValueDistribution::uniform;
  /// Prefix: sizes the grid (vLLM's max_input_len; 0: the longest query_len).
  std::int32_t max_query_len = 0;
  /// Prefix: also write the new tokens' K/V into the cache (what vLLM does before attention);
  /// false leaves their slots NaN-poisoned.
  bool cache_new_tokens = true;
  /// Prefix: where the kernel reads the new tokens' K/V (PrefixArgs::new_kv_source). "input" is
  /// vLLM's context_attention_fwd; "cache" (FlashAttention / FlashInfer / IPEX backends) needs
  /// cache_new_tokens and differs from "input" only for fp8 caches.
  NewKVSource new_kv_source = NewKVSource::input;
  /// Compute what vLLM's kernels compute: the features they drop are off (vllm_compat.hpp).
  bool vllm_faithful = false;
  /// reshape_and_cache: rows of key / value past the new tokens with slot -1 (vLLM's padding
  /// tokens, e.g. of a CUDA graph), which must not be written.
  std::int32_t padding_tokens = 2;
  /// How the paged pool is built: block-table columns of garbage past the longest sequence's
  /// need, and NaN poison in every cache slot no token occupies (0 with poison_unused false).
  std::int32_t extra_table_columns = 1;
  bool poison_unused = true;

  /// The dtype the caches store: dtype, or the cache format.
  DType cache_storage_dtype() const { return kv_cache_dtype.value_or(dtype); }
  /// The caches are fp8 (stored value / scale, dequantised with k_scale / v_scale).
  bool fp8_cache() const { return dtype_info(cache_storage_dtype()).scaled; }
  /// The caches are integer codes with scales and zero points (kv_quant).
  bool integer_cache() const { return is_integer_cache(cache_storage_dtype()); }
  /// Prefix: cached tokens of sequence s (seq_len - query_len). Decode: seq_len - 1.
  std::int32_t context_len(std::size_t s) const;
  /// Prefix: new tokens of the batch (rows of query). Decode: num_seqs.
  std::int32_t num_tokens() const;
  /// vLLM's query_start_loc: the first row of query of every sequence, then num_tokens()
  /// (num_seqs + 1 entries; decode: one row per sequence).
  std::vector<std::int32_t> query_start_locs() const;
  /// The dequantisation scale of `tensor` for KV head `kv_head` as the kernels receive it (f32):
  /// the per-head scale when given, else k_scale / v_scale; 1 unless the cache is fp8.
  float kv_scale(CacheTensor tensor, std::int32_t kv_head) const;
};

/// vLLM's test lengths: uniform in [lo_s, max_seq_len], the last one = max_seq_len, where lo_s is
/// 1 (decode) or max(1, query_lens[s]) (prefix). Drawn from the seed on a stream of their own, so
/// that they never shift the values the tensor builders draw.
std::vector<std::int32_t> draw_seq_lens(std::int32_t num_seqs, std::int32_t max_seq_len, std::uint64_t seed,
                                        const std::vector<std::int32_t>& query_lens = {});

/// Parses one case. `source` names the input in errors ("cases/a.json"). Throws pao::Error.
Case parse_case(std::string_view json_text, std::string_view source);
Case load_case_file(const std::filesystem::path& path);

/// The resolved case as canonical JSON (keys sorted, "id" included): parse_case(case_to_json(c))
/// == c. Fields of golden format 1 are always written; the later ones (k_head_scales,
/// v_head_scales, max_query_len, cache_new_tokens, extra_table_columns, poison_unused) only when
/// they differ from their defaults, so that the metadata of older goldens does not change.
/// indent < 0: one line.
std::string case_to_json(const Case& c, int indent = -1);

/// The id derived from the parameters. Defaulted fields are left out; everything else is in,
/// so two different cases never share an id. e.g. decode-h40x40-d128-b16-f16-auto-alibi-n7-L2048-s0
std::string derive_case_id(const Case& c, bool seq_lens_given, bool max_seq_len_given);

/// One line for humans: "decode, 7 seqs (max 2048), heads 40/40, head_size 128, block 16, f16, ...".
std::string describe(const Case& c);

/// The f32 scale the kernels use.
float effective_scale(const Case& c);
/// V2's max_num_partitions (pao/plan/partition.hpp; 1 for prefix cases).
std::int32_t max_num_partitions(const Case& c);
/// "auto" (unset), or the cache format's name ("fp8_e4m3").
std::string_view kv_cache_dtype_name(std::optional<DType> t);
/// The case's kv_cache_dtype as its JSON writes it: kv_cache_dtype_name, or "u4" (a u8 cache of
/// 4-bit codes, kv_quant.bits 4).
std::string_view kv_cache_dtype_name(const Case& c);
/// vLLM's kv_cache_dtype strings: "auto" (unset), "fp8" (= "fp8_e4m3") and the name of every cache
/// format of the dtype table. Throws pao::Error naming `what` (a flag or a field) on anything else.
std::optional<DType> parse_kv_cache_dtype(std::string_view text, std::string_view what = "kv_cache_dtype");
/// "auto, fp8_e4m3 (alias fp8), fp8_e5m2, u8, i8": what parse_kv_cache_dtype accepts.
std::string kv_cache_dtype_choices();
/// Sets c's cache from a kv_cache_dtype string: what parse_kv_cache_dtype accepts, or "u4" (a u8
/// cache of 4-bit codes: kv_quant.bits 4). The one reader of the string for case files and flags.
void set_kv_cache_dtype(Case& c, std::string_view text, std::string_view what = "kv_cache_dtype");

bool operator==(const Case& a, const Case& b);

}  // namespace pao::cases

// A case's golden tensors and metadata (pao/golden/tensors.hpp). What differs by kernel kind —
// its tensors, its outputs, its metadata keys — is the kind's (pao/kinds/kernel_kind.hpp).
#include "pao/golden/tensors.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>

#include "pao/cases/case_schema.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"
#include "pao/plan/prefix_plan.hpp"

namespace pao::golden {

using cases::Case;
using cases::CaseKernel;

namespace {

std::string join(const std::vector<std::string>& names, const char* separator = ",") {
  std::string s;
  for (const auto& n : names) {
    if (!s.empty()) s += separator;
    s += n;
  }
  return s;
}

std::string join(const std::vector<std::int32_t>& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

/// insert_or_assign of a std::string: GCC 12 -O3 warns (-Wrestrict, a false positive) on
/// std::string::operator=(const char*).
void put(SafetensorsMetadata& m, const char* key, std::string value) {
  m.insert_or_assign(key, std::move(value));
}

}  // namespace

SafetensorsMetadata golden_metadata(const Case& c, std::int64_t num_blocks,
                                    const std::vector<std::string>& outputs) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  const bool attends = kind.traits().attends;  // without attention: no query, no attention options
  SafetensorsMetadata m;
  put(m, "format", "pao-golden");
  put(m, "format_version", kGoldenFormatVersion);
  put(m, "pao_version", PAO_VERSION);
  put(m, "case", case_to_json(c));
  put(m, "case_id", c.id);
  put(m, "kernel", std::string(kind.name()));
  put(m, "num_seqs", std::to_string(c.num_seqs));
  if (attends) put(m, "num_heads", std::to_string(c.num_heads));
  put(m, "num_kv_heads", std::to_string(c.num_kv_heads));
  put(m, "head_size", std::to_string(c.head_size));
  put(m, "block_size", std::to_string(c.block_size));
  put(m, "num_blocks", std::to_string(num_blocks));
  put(m, "dtype", std::string(dtype_name(c.dtype)));
  put(m, "kv_cache_dtype", std::string(cases::kv_cache_dtype_name(c)));
  put(m, "cache_storage_dtype", std::string(dtype_name(c.cache_storage_dtype())));
  put(m, "fp8_format", std::string(dtype_info(c.cache_storage_dtype()).format));
  put(m, "kv_layout", kv_layout_name(c.kv_layout));
  put(m, "x", std::to_string(vllm_key_x(c.cache_storage_dtype())));
  put(m, "k_scale", format_f32(static_cast<float>(c.k_scale)));
  put(m, "v_scale", format_f32(static_cast<float>(c.v_scale)));
  if (attends) {
    // The features the outputs were computed with: with vllm_faithful, what vLLM keeps of the case
    // (a harness that applies these fields computes what the golden holds; `case` keeps the request).
    const cases::KernelFeatures features = cases::kernel_features(c);
    put(m, "scale", format_f32(effective_scale(c)));
    put(m, "alibi", c.alibi ? "true" : "false");
    put(m, "soft_cap", format_f32(static_cast<float>(features.soft_cap)));
    put(m, "sliding_window", std::to_string(features.sliding_window));
  }
  put(m, "seq_lens", join(c.seq_lens));
  put(m, "max_seq_len", std::to_string(c.max_seq_len));
  put(m, "distribution", to_string(c.distribution));
  put(m, "seed", std::to_string(c.seed));
  // Whether vLLM's own kernels compute what this golden holds (pao/cases/vllm_compat.hpp).
  const std::vector<std::string> incompatible = cases::vllm_incompatibilities(c);
  put(m, "vllm_compatible", incompatible.empty() || c.vllm_faithful ? "true" : "false");
  if (!incompatible.empty())
    put(m, c.vllm_faithful ? "vllm_faithful_dropped" : "vllm_incompatible", join(incompatible, "; "));
  // The input list is exact: alibi_slopes only with ALiBi on, scales and zero points only with an
  // integer cache.
  std::vector<std::string> inputs;
  for (const auto& n : golden_input_names(c.kernel))
    if (kinds::golden_tensor_applies(c, n)) inputs.push_back(n);
  put(m, "inputs", join(inputs));
  put(m, "outputs", join(outputs));  // the rest are recomputed from the inputs when needed
  kind.write_metadata(c, m);
  return m;
}

namespace {

/// A kind's names as the vector the golden API returns, built once per kind.
template <typename Names>
const std::vector<std::string>& names_of(CaseKernel kernel, Names names) {
  static std::map<CaseKernel, std::vector<std::string>> cache = [&] {
    std::map<CaseKernel, std::vector<std::string>> m;
    for (const kinds::KernelKind* k : kinds::kernel_kinds()) m[k->traits().id] = names(*k);
    return m;
  }();
  return cache.at(kernel);
}

}  // namespace

std::string format_f32(float v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

NamedTensorViews GoldenTensors::views() const {
  NamedTensorViews out;
  for (const auto& [name, t] : tensors) out.emplace_back(name, t.view());
  return out;
}

const Tensor* GoldenTensors::find(std::string_view name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

const std::vector<std::string>& golden_input_names(CaseKernel kernel) {
  return names_of(kernel, [](const kinds::KernelKind& k) {
    return std::vector<std::string>(k.traits().inputs.begin(), k.traits().inputs.end());
  });
}

const std::vector<std::string>& golden_output_names(CaseKernel kernel) {
  return names_of(kernel, [](const kinds::KernelKind& k) {
    std::vector<std::string> out;
    for (const auto& o : k.traits().outputs) out.emplace_back(o.name);
    return out;
  });
}

double estimated_cost(const Case& c) {
  const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
  double tokens = 0;
  for (auto len : c.seq_lens) tokens += len;
  return kinds::kind_of(c).estimated_cost(c) + 2.0 * tokens * kv_width;  // the caches, generated and written
}

std::vector<MemoryTerm> estimated_memory_terms(const Case& c) {
  // In doubles: a case's fields may be far too large for the int32 arithmetic of the builders,
  // which is what this estimate stands guard for (num_seqs 2e9 x 17 tokens overflows pool blocks).
  const kinds::KernelKind& kind = kinds::kind_of(c);
  const double dtype_bytes = static_cast<double>(dtype_size(c.dtype));
  const double cache_bytes = static_cast<double>(dtype_size(c.cache_storage_dtype()));
  const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
  const double q_width =
      static_cast<double>(kind.traits().attends ? c.num_heads : c.num_kv_heads) * c.head_size;
  const double seqs = static_cast<double>(c.seq_lens.size());
  double used_blocks = 0, widest = 0;
  for (auto len : c.seq_lens) {
    const double blocks = std::ceil(static_cast<double>(len) / std::max(c.block_size, 1));
    used_blocks += blocks;
    widest = std::max(widest, blocks);
  }
  const double pool_blocks = c.num_blocks > 0 ? c.num_blocks : used_blocks + seqs;  // cases::pool_num_blocks
  double rows = 0;  // query rows (decode: one per sequence) or new tokens
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) rows += c.query_lens.empty() ? 1 : c.query_lens[s];
  double param_bytes = 0;  // an integer cache's scales and zero points, per element of K and V together
  if (c.integer_cache())
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      param_bytes += quant_param_bytes_per_element(c.kv_quant, t, c.head_size, c.block_size);

  std::vector<MemoryTerm> terms;
  terms.push_back({"the K/V caches", c.num_blocks > 0 ? "num_blocks" : "seq_lens",
                   pool_blocks * c.block_size * kv_width * (2 * cache_bytes + param_bytes)});
  // query, key/value, out, out_exact and the kernel outputs in the dtype, an fp64 accumulator
  terms.push_back({"the query and new-token rows", c.query_lens.empty() ? "num_seqs" : "query_lens",
                   rows * (q_width * (6 * dtype_bytes + 8) + 2 * kv_width * dtype_bytes)});
  if (cases::kind_takes(kind, *cases::find_case_field("padding_tokens")))  // key, value and a slot of -1
    terms.push_back({"the key/value padding rows", "padding_tokens",
                     static_cast<double>(c.padding_tokens) * (2 * kv_width * dtype_bytes + 8)});
  terms.push_back({"the block tables", c.extra_table_columns > widest ? "extra_table_columns" : "num_seqs",
                   seqs * std::max(widest + c.extra_table_columns, 1.0) * 4});
  terms.push_back({"the per-sequence lengths", "num_seqs", seqs * 4 * 8});  // seq_lens, query_lens and copies
  if (kind.runs_as(KernelVariant::prefix)) {  // the prefix plan's CTAs and K tiles
    PrefixShape shape;
    static_cast<LaunchShape&>(shape) = c;
    static_cast<KernelTuning&>(shape) = c;
    shape.max_query_len = c.max_query_len;
    terms.push_back({"the prefix plan (its CTAs and K tiles)",
                     c.max_query_len > 0 ? "max_query_len" : "context_tile",
                     prefix_plan_bytes(shape, c.seq_lens, c.query_lens)});
  }
  if (kind.partitioned())
    terms.push_back(
        {"V2's partials", "max_seq_len",
         seqs * c.num_heads *
             std::ceil(static_cast<double>(std::max(c.max_seq_len, 1)) / std::max(c.partition_size, 1)) *
             (c.head_size * dtype_bytes + 8)});
  return terms;
}

double estimated_peak_memory(const Case& c) {
  double bytes = 0;
  for (const MemoryTerm& t : estimated_memory_terms(c)) bytes += t.bytes;
  // The tensors are held once and streamed to the file; the working memory of the kernels and the
  // writer stays below as much again plus 128 MB. Measured by tools/scripts/golden_peak_memory.py
  // (docs/golden.md "Memory"): peaks of 54 %, 47 % and 95 % of the estimate.
  return 2.0 * bytes + 128e6;
}

void require_golden_memory(const Case& c, int concurrent) {
  const std::vector<MemoryTerm> terms = estimated_memory_terms(c);
  const MemoryTerm& largest = *std::max_element(
      terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  const std::string field(largest.field);
  require_memory(
      "case " + c.id + (concurrent > 1 ? " (times --jobs " + std::to_string(concurrent) + ")" : "") +
          " (mostly " + std::string(largest.what) + ", " + format_bytes(2 * largest.bytes) +
          ", sized by its field '" + field + "')",
      estimated_peak_memory(c) * std::max(concurrent, 1),
      (field == "seq_lens" ? std::string("shorten its seq_lens (or num_blocks)") : "lower its " + field) +
          (concurrent > 1 ? ", lower --jobs" : ""));
}

GoldenTensors make_golden(const Case& c, const OutputSelection& outputs) {
  require_golden_memory(c);  // before anything is allocated: a clear error, not std::bad_alloc
  GoldenTensors g;
  g.golden_case = c;
  std::vector<std::string> names;
  for (auto& name : selected_output_names(c.kernel, outputs))
    if (kinds::golden_tensor_applies(c, name)) names.push_back(std::move(name));
  kinds::kind_of(c).build_golden(c, names, g);
  g.metadata = golden_metadata(c, g.find("key_cache")->size(0), names);
  return g;
}

std::vector<std::string> missing_outputs(const GoldenTensors& g) {
  std::vector<std::string> missing;
  for (const auto& name : golden_output_names(g.golden_case.kernel))
    if (!g.find(name) && kinds::golden_tensor_applies(g.golden_case, name)) missing.push_back(name);
  return missing;
}

std::vector<std::pair<std::string, Tensor>> compute_outputs(const GoldenTensors& g,
                                                            const std::vector<std::string>& names) {
  return kinds::kind_of(g.golden_case).compute_outputs(g, names);
}

void complete_outputs(GoldenTensors& g) {
  const std::vector<std::string> missing = missing_outputs(g);
  if (missing.empty()) return;
  for (auto& named : compute_outputs(g, missing)) g.tensors.push_back(std::move(named));
}

}  // namespace pao::golden

// A case's golden tensors and metadata (pao/golden/tensors.hpp). What differs by kernel kind —
// its tensors, its outputs, its metadata keys — is the kind's (pao/kinds/kernel_kind.hpp).
#include "pao/golden/tensors.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>

#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"

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

SafetensorsMetadata make_metadata(const Case& c, const GoldenTensors& g,
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
  put(m, "num_blocks", std::to_string(g.find("key_cache")->size(0)));
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

double estimated_peak_memory(const Case& c) {
  const double dtype_bytes = static_cast<double>(dtype_size(c.dtype));
  const double cache_bytes = static_cast<double>(dtype_size(c.cache_storage_dtype()));
  const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
  const double q_width =
      static_cast<double>(kinds::kind_of(c).traits().attends ? c.num_heads : c.num_kv_heads) * c.head_size;
  const double slots = static_cast<double>(cases::pool_num_blocks(c)) * c.block_size;
  double rows = 0;  // query rows (decode: one per sequence) or new tokens
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) rows += c.query_lens.empty() ? 1 : c.query_lens[s];
  double param_bytes = 0;  // an integer cache's scales and zero points, per element of K and V together
  if (c.integer_cache())
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      param_bytes += quant_param_bytes_per_element(c.kv_quant, t, c.head_size, c.block_size);
  const double caches = slots * kv_width * (2 * cache_bytes + param_bytes);
  // query, key/value, out, out_exact and the kernel outputs in the dtype, an fp64 accumulator
  const double token_rows = rows * (q_width * (6 * dtype_bytes + 8) + 2 * kv_width * dtype_bytes);
  double partials = 0;
  if (kinds::kind_of(c).traits().partitioned)
    partials = static_cast<double>(c.num_seqs) * c.num_heads *
               max_num_partitions(c.max_seq_len, c.partition_size) * (c.head_size * dtype_bytes + 8);
  // The tensors are held once and streamed to the file; the working memory of the kernels and the
  // writer stays below as much again plus 128 MB. Measured by tools/scripts/golden_peak_memory.py
  // (docs/golden.md "Memory"): peaks of 54 %, 47 % and 95 % of the estimate.
  return 2.0 * (caches + token_rows + partials) + 128e6;
}

GoldenTensors make_golden(const Case& c, const OutputSelection& outputs) {
  GoldenTensors g;
  g.golden_case = c;
  std::vector<std::string> names;
  for (auto& name : selected_output_names(c.kernel, outputs))
    if (kinds::golden_tensor_applies(c, name)) names.push_back(std::move(name));
  kinds::kind_of(c).build_golden(c, names, g);
  g.metadata = make_metadata(c, g, names);
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

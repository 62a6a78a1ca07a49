// A case's golden tensors and metadata (pao/golden/tensors.hpp).
#include "pao/golden/tensors.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"

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

std::string fp8_format(DType t) {
  if (t == DType::fp8_e4m3) return "e4m3fn";
  if (t == DType::fp8_e5m2) return "e5m2";
  return "none";
}

/// insert_or_assign of a std::string: GCC 12 -O3 warns (-Wrestrict, a false positive) on
/// std::string::operator=(const char*).
void put(SafetensorsMetadata& m, const char* key, std::string value) {
  m.insert_or_assign(key, std::move(value));
}

SafetensorsMetadata make_metadata(const Case& c, const GoldenTensors& g,
                                  const std::vector<std::string>& outputs) {
  SafetensorsMetadata m;
  put(m, "format", "pao-golden");
  put(m, "format_version", kGoldenFormatVersion);
  put(m, "pao_version", PAO_VERSION);
  put(m, "case", case_to_json(c));
  put(m, "case_id", c.id);
  put(m, "kernel", to_string(c.kernel));
  put(m, "num_seqs", std::to_string(c.num_seqs));
  const bool reshape = c.kernel == CaseKernel::reshape_and_cache;  // no query, no attention options
  if (!reshape) put(m, "num_heads", std::to_string(c.num_heads));
  put(m, "num_kv_heads", std::to_string(c.num_kv_heads));
  put(m, "head_size", std::to_string(c.head_size));
  put(m, "block_size", std::to_string(c.block_size));
  put(m, "num_blocks", std::to_string(g.find("key_cache")->size(0)));
  put(m, "dtype", std::string(dtype_name(c.dtype)));
  put(m, "kv_cache_dtype", std::string(cases::kv_cache_dtype_name(c.kv_cache_dtype)));
  put(m, "cache_storage_dtype", std::string(dtype_name(c.cache_storage_dtype())));
  put(m, "fp8_format", fp8_format(c.cache_storage_dtype()));
  put(m, "kv_layout", kv_layout_name(c.kv_layout));
  put(m, "x", std::to_string(vllm_key_x(c.cache_storage_dtype())));
  put(m, "k_scale", format_f32(static_cast<float>(c.k_scale)));
  put(m, "v_scale", format_f32(static_cast<float>(c.v_scale)));
  if (!reshape) {
    put(m, "scale", format_f32(effective_scale(c)));
    put(m, "alibi", c.alibi ? "true" : "false");
    put(m, "soft_cap", format_f32(static_cast<float>(c.soft_cap)));
    put(m, "sliding_window", std::to_string(c.sliding_window));
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
  // The input list is exact: alibi_slopes is in the file only with ALiBi on.
  std::vector<std::string> inputs;
  for (const auto& n : golden_input_names(c.kernel))
    if (n != "alibi_slopes" || c.alibi) inputs.push_back(n);
  put(m, "inputs", join(inputs));
  put(m, "outputs", join(outputs));  // the rest are recomputed from the inputs when needed
  if (c.kernel == CaseKernel::decode) {
    put(m, "partition_size", std::to_string(c.partition_size));
    put(m, "max_num_partitions", std::to_string(max_num_partitions(c)));
    put(m, "warp_size", std::to_string(c.warp_size));
    put(m, "threads_per_cta", std::to_string(c.threads_per_cta));
  } else if (c.kernel == CaseKernel::reshape_and_cache) {
    put(m, "query_lens", join(c.query_lens));
    put(m, "padding_tokens", std::to_string(c.padding_tokens));
  } else {
    put(m, "query_lens", join(c.query_lens));
    put(m, "block_m", std::to_string(c.block_m));
    put(m, "block_n", std::to_string(c.block_n));
    put(m, "context_tile", std::to_string(c.context_tile));
    put(m, "new_kv_source", new_kv_source_name(cases::kernel_features(c).new_kv_source));
  }
  return m;
}

bool wanted(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// The decode outputs `names`, each kernel run only if one of its outputs is asked for.
NamedTensors decode_outputs(const cases::DecodeCase& dc, const std::vector<std::string>& names) {
  const KernelConfig config = kernel_config(dc.spec);
  NamedTensors t;
  if (wanted(names, "out") || wanted(names, "out_exact")) {
    DecodeOutputs exact = paged_attention_v1(dc.args(), Precision::exact, config);
    if (wanted(names, "out")) t.emplace_back("out", std::move(exact.out));
    if (wanted(names, "out_exact")) t.emplace_back("out_exact", std::move(exact.out_f64));
  }
  if (wanted(names, "v1.out"))
    t.emplace_back("v1.out", std::move(paged_attention_v1(dc.args(), Precision::kernel, config).out));
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.starts_with("v2."); })) {
    DecodeOutputs v2 = paged_attention_v2(dc.args(), Precision::kernel, config);
    if (wanted(names, "v2.out")) t.emplace_back("v2.out", std::move(v2.out));
    if (wanted(names, "v2.tmp_out")) t.emplace_back("v2.tmp_out", std::move(v2.tmp_out));
    if (wanted(names, "v2.max_logits")) t.emplace_back("v2.max_logits", std::move(v2.max_logits));
    if (wanted(names, "v2.exp_sums")) t.emplace_back("v2.exp_sums", std::move(v2.exp_sums));
  }
  return t;
}

NamedTensors prefix_outputs(const cases::PrefixCase& pc, const std::vector<std::string>& names) {
  const KernelConfig config = kernel_config(pc.spec);
  NamedTensors t;
  if (wanted(names, "out") || wanted(names, "out_exact")) {
    PrefixOutputs exact = prefix_attention(pc.args(), Precision::exact, config);
    if (wanted(names, "out")) t.emplace_back("out", std::move(exact.out));
    if (wanted(names, "out_exact")) t.emplace_back("out_exact", std::move(exact.out_f64));
  }
  if (wanted(names, "prefix.out"))
    t.emplace_back("prefix.out", std::move(prefix_attention(pc.args(), Precision::kernel, config).out));
  return t;
}

void append(GoldenTensors& g, NamedTensors outputs) {
  for (auto& named : outputs) g.tensors.push_back(std::move(named));
}

void make_decode(const Case& c, GoldenTensors& g, const std::vector<std::string>& outputs) {
  cases::DecodeCase dc = cases::make_decode_case(c);
  NamedTensors computed = decode_outputs(dc, outputs);
  auto& t = g.tensors;
  t.emplace_back("query", std::move(dc.query));
  t.emplace_back("key_cache", std::move(dc.key_cache));
  t.emplace_back("value_cache", std::move(dc.value_cache));
  t.emplace_back("block_tables", std::move(dc.block_tables));
  t.emplace_back("seq_lens", std::move(dc.seq_lens));
  if (c.alibi) t.emplace_back("alibi_slopes", std::move(dc.alibi_slopes));
  append(g, std::move(computed));
}

void make_prefix(const Case& c, GoldenTensors& g, const std::vector<std::string>& outputs) {
  cases::PrefixCase pc = cases::make_prefix_case(c);
  NamedTensors computed = prefix_outputs(pc, outputs);
  auto& t = g.tensors;
  t.emplace_back("query", std::move(pc.query));
  t.emplace_back("key", std::move(pc.key));
  t.emplace_back("value", std::move(pc.value));
  t.emplace_back("key_cache", std::move(pc.key_cache));
  t.emplace_back("value_cache", std::move(pc.value_cache));
  t.emplace_back("block_tables", std::move(pc.block_tables));
  t.emplace_back("seq_lens", std::move(pc.seq_lens));
  t.emplace_back("query_start_loc", std::move(pc.query_start_loc));
  if (c.alibi) t.emplace_back("alibi_slopes", std::move(pc.alibi_slopes));
  append(g, std::move(computed));
}

void make_reshape(const Case& c, GoldenTensors& g) {
  cases::ReshapeCase rc = cases::make_reshape_case(c);
  auto& t = g.tensors;
  t.emplace_back("key", std::move(rc.key));
  t.emplace_back("value", std::move(rc.value));
  t.emplace_back("slot_mapping", std::move(rc.slot_mapping));
  t.emplace_back("key_cache_before", std::move(rc.key_cache_before));
  t.emplace_back("value_cache_before", std::move(rc.value_cache_before));
  t.emplace_back("block_tables", std::move(rc.block_tables));
  t.emplace_back("seq_lens", std::move(rc.seq_lens));
  t.emplace_back("key_cache", std::move(rc.key_cache));
  t.emplace_back("value_cache", std::move(rc.value_cache));
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
  static const std::vector<std::string> decode = {"query",        "key_cache", "value_cache",
                                                  "block_tables", "seq_lens",  "alibi_slopes"};
  static const std::vector<std::string> prefix = {
      "query",        "key",      "value",           "key_cache",   "value_cache",
      "block_tables", "seq_lens", "query_start_loc", "alibi_slopes"};
  static const std::vector<std::string> reshape = {
      "key", "value", "slot_mapping", "key_cache_before", "value_cache_before", "block_tables", "seq_lens"};
  if (kernel == CaseKernel::reshape_and_cache) return reshape;
  return kernel == CaseKernel::decode ? decode : prefix;
}

const std::vector<std::string>& golden_output_names(CaseKernel kernel) {
  static const std::vector<std::string> decode = {"out",        "out_exact",     "v1.out",     "v2.out",
                                                  "v2.tmp_out", "v2.max_logits", "v2.exp_sums"};
  static const std::vector<std::string> prefix = {"out", "out_exact", "prefix.out"};
  static const std::vector<std::string> reshape = {"key_cache", "value_cache"};
  if (kernel == CaseKernel::reshape_and_cache) return reshape;
  return kernel == CaseKernel::decode ? decode : prefix;
}

double estimated_cost(const Case& c) {
  const double width = static_cast<double>(c.num_heads) * c.head_size;
  const double kv_width = static_cast<double>(c.num_kv_heads) * c.head_size;
  double work = 0, tokens = 0;
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
    tokens += c.seq_lens[s];
    if (c.kernel == CaseKernel::decode) {
      work += 3.0 * c.seq_lens[s] * width;  // exact V1, kernel V1, kernel V2
    } else if (c.kernel == CaseKernel::reshape_and_cache) {
      work += 2.0 * c.query_lens[s] * kv_width;  // the write, and the copy of the caches
    } else {
      const double q = c.query_lens[s];
      work += 2.0 * q * (c.seq_lens[s] - q / 2) * width;  // exact and kernel, causal
    }
  }
  return work + 2.0 * tokens * kv_width;  // the caches, generated and written
}

GoldenTensors make_golden(const Case& c, const OutputSelection& outputs) {
  GoldenTensors g;
  g.golden_case = c;
  const std::vector<std::string> names = selected_output_names(c.kernel, outputs);
  if (c.kernel == CaseKernel::decode) {
    make_decode(c, g, names);
  } else if (c.kernel == CaseKernel::reshape_and_cache) {
    make_reshape(c, g);
  } else {
    make_prefix(c, g, names);
  }
  g.metadata = make_metadata(c, g, names);
  return g;
}

std::vector<std::string> missing_outputs(const GoldenTensors& g) {
  std::vector<std::string> missing;
  for (const auto& name : golden_output_names(g.golden_case.kernel))
    if (!g.find(name)) missing.push_back(name);
  return missing;
}

std::vector<std::pair<std::string, Tensor>> compute_outputs(const GoldenTensors& g,
                                                            const std::vector<std::string>& names) {
  const CaseKernel kernel = g.golden_case.kernel;
  require(kernel != CaseKernel::reshape_and_cache, "golden ", g.golden_case.id,
          ": a reshape_and_cache golden must hold its written caches; it lacks ", join(names));
  return kernel == CaseKernel::decode ? decode_outputs(decode_case_of(g), names)
                                      : prefix_outputs(prefix_case_of(g), names);
}

void complete_outputs(GoldenTensors& g) {
  const std::vector<std::string> missing = missing_outputs(g);
  if (!missing.empty()) append(g, compute_outputs(g, missing));
}

}  // namespace pao::golden

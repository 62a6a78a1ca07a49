// Case JSON: strict parsing (unknown fields, wrong types and inconsistent values are errors that
// name the field), vLLM's defaults, seeded sequence lengths, and the canonical JSON writer.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pao/cases/case.hpp"
#include "pao/core/error.hpp"
#include "pao/core/random.hpp"
#include "pao/core/suggest.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cases {

namespace {

using nlohmann::json;

const std::vector<std::string_view> kFields = {
    "alibi",
    "block_m",
    "block_n",
    "block_size",
    "cache_new_tokens",
    "context_tile",
    "distribution",
    "dtype",
    "extra_table_columns",
    "head_size",
    "id",
    "k_head_scales",
    "k_scale",
    "kernel",
    "kv_cache_dtype",
    "kv_layout",
    "max_query_len",
    "max_seq_len",
    "new_kv_source",
    "num_blocks",
    "num_heads",
    "num_kv_heads",
    "num_seqs",
    "padding_tokens",
    "partition_size",
    "poison_unused",
    "query_lens",
    "scale",
    "seed",
    "seq_lens",
    "sliding_window",
    "soft_cap",
    "threads_per_cta",
    "v_head_scales",
    "v_scale",
    "vllm_faithful",
    "warp_size",
};
const std::vector<std::string_view> kDecodeOnly = {"partition_size", "warp_size", "threads_per_cta"};
/// Fields of an attention kernel that a reshape_and_cache case does not take.
const std::vector<std::string_view> kAttentionOnly = {"num_heads", "scale",          "alibi",
                                                      "soft_cap",  "sliding_window", "vllm_faithful"};
const std::vector<std::string_view> kPrefixOnly = {
    "query_lens", "block_m", "block_n", "context_tile", "max_query_len", "cache_new_tokens", "new_kv_source"};

/// The seq_lens drawn for a case that gives only max_seq_len come from their own stream, so that
/// they never shift the values make_decode_case / make_prefix_case draw from the seed.
constexpr std::uint64_t kLengthStream = 0x6c656e73;  // "lens"

bool try_parse_kv_cache_dtype(std::string_view text, KVCacheDType& out) {
  if (text == "auto") {
    out = KVCacheDType::auto_dtype;
  } else if (text == "fp8_e4m3" || text == "fp8") {
    out = KVCacheDType::fp8_e4m3;
  } else if (text == "fp8_e5m2") {
    out = KVCacheDType::fp8_e5m2;
  } else {
    return false;
  }
  return true;
}

bool contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// Typed, range-checked access to the fields of one case object.
class Fields {
 public:
  Fields(const json& j, std::string_view source) : j_(j), source_(source) {}

  bool has(std::string_view name) const { return j_.contains(name) && !j_.at(std::string(name)).is_null(); }
  const json& at(std::string_view name) const { return j_.at(std::string(name)); }

  [[noreturn]] void bad(std::string_view name, const std::string& rule) const {
    fail("case ", source_, ": field '", name, "' ", rule);
  }

  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const json& v = at(name);
    if (!v.is_number_integer()) bad(name, "must be an integer, got " + v.dump());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      bad(name,
          "= " + v.dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi)
      bad(name,
          "= " + v.dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  std::int32_t i32(std::string_view name, std::int64_t lo, std::int32_t fallback) const {
    return has(name) ? static_cast<std::int32_t>(integer(name, lo, std::numeric_limits<std::int32_t>::max()))
                     : fallback;
  }
  double number(std::string_view name, double fallback) const {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_number()) bad(name, "must be a number, got " + v.dump());
    return v.get<double>();
  }
  bool boolean(std::string_view name, bool fallback) const {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_boolean()) bad(name, "must be true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string string(std::string_view name, std::string fallback) const {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_string()) bad(name, "must be a string, got " + v.dump());
    return v.get<std::string>();
  }
  /// A list of `count` positive finite f32 values (per-KV-head scales).
  std::vector<double> scales(std::string_view name, std::int32_t count) const {
    const json& v = at(name);
    if (!v.is_array() || v.size() != static_cast<std::size_t>(count))
      bad(name, "must be a list of num_kv_heads = " + std::to_string(count) + " numbers, got " + v.dump());
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double x = v[i].is_number() ? v[i].get<double>() : -1.0;
      if (!(x > 0) || !std::isfinite(x) || x > std::numeric_limits<float>::max())
        bad(name, "[" + std::to_string(i) + "] = " + v[i].dump() + ": must be a positive finite f32 value");
      out.push_back(x);
    }
    return out;
  }
  std::vector<std::int32_t> lengths(std::string_view name) const {
    const json& v = at(name);
    if (!v.is_array() || v.empty()) bad(name, "must be a non-empty list of integers");
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0 ||
          v[i].get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
        bad(name, "[" + std::to_string(i) + "] = " + v[i].dump() + ": must be an integer in [0, 2^31)");
      out.push_back(v[i].get<std::int32_t>());
    }
    return out;
  }

 private:
  const json& j_;
  std::string source_;
};

void check_field_names(const json& j, std::string_view source, CaseKernel kernel) {
  for (const auto& [key, value] : j.items()) {
    if (!contains(kFields, key)) {
      const std::string best = closest_name(key, std::vector<std::string>(kFields.begin(), kFields.end()), 2);
      std::ostringstream known;
      for (std::size_t i = 0; i < kFields.size(); ++i) known << (i ? ", " : "") << kFields[i];
      fail("case ", source, ": unknown field '", key, "'",
           best.empty() ? std::string() : " (did you mean '" + best + "'?)", "; known fields: ", known.str());
    }
    const std::string k = to_string(kernel);
    if (kernel != CaseKernel::decode && contains(kDecodeOnly, key))
      fail("case ", source, ": field '", key, "' applies to decode cases only (this case has kernel \"", k,
           "\")");
    const bool reshape = kernel == CaseKernel::reshape_and_cache;
    if ((kernel == CaseKernel::decode || (reshape && key != "query_lens")) && contains(kPrefixOnly, key))
      fail("case ", source, ": field '", key, "' applies to prefix cases only (this case has kernel \"", k,
           "\")");
    if (reshape && contains(kAttentionOnly, key))
      fail("case ", source, ": field '", key, "' applies to attention kernels (this case has kernel \"", k,
           "\")");
    if (!reshape && key == "padding_tokens")
      fail("case ", source, ": field '", key,
           "' applies to reshape_and_cache cases only (this case has kernel \"", k, "\")");
  }
}

DType parse_activation(const Fields& f, std::string_view name) {
  const std::string s = f.string(name, "");
  if (s.empty()) f.bad(name, "is required: f32, f16 or bf16");
  if (s == "f32") return DType::f32;
  if (s == "f16") return DType::f16;
  if (s == "bf16") return DType::bf16;
  f.bad(name, "= \"" + s + "\": expected f32, f16 or bf16");
}

void resolve_lengths(const Fields& f, Case& c) {
  const bool given = f.has("seq_lens");
  if (has_new_tokens(c.kernel)) {
    if (!f.has("query_lens"))
      f.bad("query_lens", "is required for " + to_string(c.kernel) + " cases (new tokens per sequence)");
    c.query_lens = f.lengths("query_lens");
  }
  if (given) {
    c.seq_lens = f.lengths("seq_lens");
  } else if (!f.has("max_seq_len")) {
    f.bad("seq_lens", "is required (or max_seq_len, for lengths drawn from the seed)");
  }
  const std::size_t declared = has_new_tokens(c.kernel) ? c.query_lens.size() : c.seq_lens.size();
  if (f.has("num_seqs")) {
    c.num_seqs = f.i32("num_seqs", 1, 0);
    if (declared != 0 && static_cast<std::size_t>(c.num_seqs) != declared)
      f.bad("num_seqs", "= " + std::to_string(c.num_seqs) + " but " +
                            (has_new_tokens(c.kernel) ? "query_lens" : "seq_lens") + " has " +
                            std::to_string(declared) + " entries");
  } else if (declared != 0) {
    c.num_seqs = static_cast<std::int32_t>(declared);
  } else {
    f.bad("num_seqs", "is required when seq_lens is drawn from max_seq_len");
  }
  if (given && c.seq_lens.size() != static_cast<std::size_t>(c.num_seqs))
    f.bad("seq_lens", "has " + std::to_string(c.seq_lens.size()) + " entries but there are " +
                          std::to_string(c.num_seqs) + " sequences");

  const std::int32_t longest_query =
      c.query_lens.empty() ? 0 : *std::max_element(c.query_lens.begin(), c.query_lens.end());
  if (f.has("max_seq_len")) {
    c.max_seq_len = f.i32("max_seq_len", given ? 0 : 1, 0);  // 0: a batch of empty sequences
    if (c.max_seq_len < longest_query)
      f.bad("max_seq_len", "= " + std::to_string(c.max_seq_len) + " is less than the longest query_len " +
                               std::to_string(longest_query));
  }
  if (!given) c.seq_lens = draw_seq_lens(c.num_seqs, c.max_seq_len, c.seed, c.query_lens);
  const std::int32_t longest = *std::max_element(c.seq_lens.begin(), c.seq_lens.end());
  if (!f.has("max_seq_len")) c.max_seq_len = longest;
  if (c.max_seq_len < longest)
    f.bad("max_seq_len", "= " + std::to_string(c.max_seq_len) + " is less than the longest seq_len " +
                             std::to_string(longest));
  if (has_new_tokens(c.kernel)) {
    for (std::size_t s = 0; s < c.seq_lens.size(); ++s)
      if (c.seq_lens[s] < c.query_lens[s])
        f.bad("seq_lens", "[" + std::to_string(s) + "] = " + std::to_string(c.seq_lens[s]) +
                              " is less than query_lens[" + std::to_string(s) + "] = " +
                              std::to_string(c.query_lens[s]) + " (seq_len counts context + new tokens)");
  }
}

void check_id(const Fields& f, const std::string& id) {
  if (id.empty()) f.bad("id", "must not be empty");
  for (char ch : id) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '-' || ch == '_' || ch == '.';
    if (!ok)
      f.bad("id", "= \"" + id + "\": only letters, digits, '-', '_' and '.' (it names the golden file)");
  }
  if (id.front() == '.') f.bad("id", "= \"" + id + "\" must not start with '.'");
}

Case parse_case_object(const json& j, std::string_view source) {
  if (!j.is_object()) fail("case ", source, ": expected a JSON object, got ", j.type_name());
  Fields f(j, source);
  Case c;
  c.seq_lens.clear();  // resolve_lengths reads them from the JSON or draws them
  const std::string kernel = f.string("kernel", "decode");
  if (kernel == "decode") {
    c.kernel = CaseKernel::decode;
  } else if (kernel == "prefix") {
    c.kernel = CaseKernel::prefix;
  } else if (kernel == "reshape_and_cache") {
    c.kernel = CaseKernel::reshape_and_cache;
  } else {
    f.bad("kernel", "= \"" + kernel + "\": expected \"decode\", \"prefix\" or \"reshape_and_cache\"");
  }
  check_field_names(j, source, c.kernel);

  const bool reshape = c.kernel == CaseKernel::reshape_and_cache;
  if (reshape && !f.has("num_kv_heads")) f.bad("num_kv_heads", "is required");
  if (!reshape && !f.has("num_heads")) f.bad("num_heads", "is required");
  if (!f.has("head_size")) f.bad("head_size", "is required");
  c.num_heads = reshape ? f.i32("num_kv_heads", 1, 0) : f.i32("num_heads", 1, 0);  // reshape: no query
  c.num_kv_heads = f.i32("num_kv_heads", 1, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0)
    f.bad("num_heads", "= " + std::to_string(c.num_heads) +
                           " is not a multiple of num_kv_heads = " + std::to_string(c.num_kv_heads));
  c.head_size = f.i32("head_size", 1, 0);
  // vLLM's CUDA paged attention dispatches a fixed list; its Triton prefix kernel pads any size.
  if (c.kernel == CaseKernel::decode && !is_supported_head_size(c.head_size))
    f.bad("head_size", "= " + std::to_string(c.head_size) + " is not one of vLLM's decode head sizes (" +
                           supported_head_sizes_text() + ")");
  c.block_size = f.i32("block_size", 1, 16);
  c.dtype = parse_activation(f, "dtype");

  const std::string cache = f.string("kv_cache_dtype", "auto");
  if (!try_parse_kv_cache_dtype(cache, c.kv_cache_dtype))
    f.bad("kv_cache_dtype",
          "= \"" + cache + "\": expected \"auto\", \"fp8_e4m3\" (alias \"fp8\") or \"fp8_e5m2\"");
  const std::string layout = f.string("kv_layout", "vllm");
  if (!try_parse_kv_layout(layout, c.kv_layout))
    f.bad("kv_layout", "= \"" + layout + "\": expected \"vllm\", \"nhd\" or \"hnd\"");
  if (c.kv_layout == KVLayout::vllm) {
    const std::int32_t x = vllm_key_x(c.cache_storage_dtype());
    if (c.head_size % x != 0)
      f.bad("head_size",
            "= " + std::to_string(c.head_size) + " is not a multiple of x = " + std::to_string(x) +
                " (the vLLM key-cache layout packs 16 bytes of " +
                std::string(dtype_name(c.cache_storage_dtype())) + "; use kv_layout \"nhd\" or \"hnd\")");
  }

  auto positive = [&](std::string_view name, double fallback) {
    const double v = f.number(name, fallback);
    if (!(v > 0) || !std::isfinite(v) || v > std::numeric_limits<float>::max())
      f.bad(name, "= " + f.at(name).dump() + ": must be a positive finite f32 value");
    return v;
  };
  c.k_scale = positive("k_scale", 1.0);
  c.v_scale = positive("v_scale", 1.0);
  if (f.has("scale")) c.scale = positive("scale", 1.0);
  c.alibi = f.boolean("alibi", false);
  c.soft_cap = f.number("soft_cap", 0.0);
  if (!(c.soft_cap >= 0) || c.soft_cap > std::numeric_limits<float>::max())
    f.bad("soft_cap", "= " + f.at("soft_cap").dump() + ": must be >= 0 (0 = off)");
  c.sliding_window = f.i32("sliding_window", 0, 0);
  if (f.has("seed")) {
    const json& v = f.at("seed");
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      f.bad("seed", "must be an integer in [0, 2^64), got " + v.dump());
    c.seed = v.get<std::uint64_t>();
  }
  c.num_blocks = f.i32("num_blocks", 0, 0);
  c.distribution = [&] {
    const std::string d = f.string("distribution", "uniform");
    try {
      return parse_value_distribution(d);
    } catch (const Error& e) {
      f.bad("distribution", std::string("= \"") + d + "\": " + e.what());
    }
  }();

  if (c.kernel == CaseKernel::decode) {
    c.partition_size = f.i32("partition_size", 1, 512);
    if (c.partition_size % c.block_size != 0) {
      // Name the field the case chose: a block_size that does not divide the default partition.
      if (f.has("partition_size") || !f.has("block_size"))
        f.bad("partition_size", "= " + std::to_string(c.partition_size) +
                                    " is not a multiple of block_size = " + std::to_string(c.block_size));
      f.bad("block_size",
            "= " + std::to_string(c.block_size) +
                " does not divide the default partition_size = " + std::to_string(c.partition_size) +
                " (V2 partitions are whole blocks; set partition_size too)");
    }
    c.warp_size = f.i32("warp_size", 1, 32);
    if ((c.warp_size & (c.warp_size - 1)) != 0)
      f.bad("warp_size",
            "= " + std::to_string(c.warp_size) + ": must be a power of two (32 NVIDIA, 64 BI-V100)");
    c.threads_per_cta = f.i32("threads_per_cta", 1, 128);
    if (c.threads_per_cta % c.warp_size != 0)
      f.bad("threads_per_cta", "= " + std::to_string(c.threads_per_cta) +
                                   " is not a multiple of warp_size = " + std::to_string(c.warp_size));
  } else if (c.kernel == CaseKernel::reshape_and_cache) {
    c.padding_tokens = f.i32("padding_tokens", 0, 2);
  } else {
    c.block_m = f.i32("block_m", 1, 128);
    c.block_n = f.i32("block_n", 1, 64);
    c.context_tile = f.i32("context_tile", 1, 32);
    c.max_query_len = f.i32("max_query_len", 0, 0);
    c.cache_new_tokens = f.boolean("cache_new_tokens", true);
    const std::string source = f.string("new_kv_source", "input");
    if (!try_parse_new_kv_source(source, c.new_kv_source))
      f.bad("new_kv_source",
            "= \"" + source + "\": expected \"input\" (vLLM's context_attention_fwd) or \"cache\"");
    if (c.new_kv_source == NewKVSource::cache && !c.cache_new_tokens)
      f.bad("new_kv_source",
            "= \"cache\" reads the new tokens from the cache: it needs cache_new_tokens true");
  }
  c.vllm_faithful = f.boolean("vllm_faithful", false);
  c.extra_table_columns = f.i32("extra_table_columns", 0, 1);
  c.poison_unused = f.boolean("poison_unused", true);
  for (const char* name : {"k_head_scales", "v_head_scales"}) {
    if (!f.has(name)) continue;
    if (c.kv_cache_dtype == KVCacheDType::auto_dtype)
      f.bad(name, "applies to fp8 caches only (kv_cache_dtype is \"auto\")");
    (name[0] == 'k' ? c.k_head_scales : c.v_head_scales) = f.scales(name, c.num_kv_heads);
  }
  resolve_lengths(f, c);
  if (c.kernel == CaseKernel::prefix && c.max_query_len > 0)
    for (std::size_t s = 0; s < c.query_lens.size(); ++s)
      if (c.query_lens[s] > c.max_query_len)
        f.bad("max_query_len", "= " + std::to_string(c.max_query_len) + " is less than query_lens[" +
                                   std::to_string(s) + "] = " + std::to_string(c.query_lens[s]));

  if (f.has("id")) {
    c.id = f.string("id", "");
    check_id(f, c.id);
  } else {
    c.id = derive_case_id(c, f.has("seq_lens"), f.has("max_seq_len"));
  }
  return c;
}

}  // namespace

namespace {

struct NamedDistribution {
  ValueDistribution d;
  const char* name;
};
constexpr NamedDistribution kDistributions[] = {
    {ValueDistribution::uniform, "uniform"},     {ValueDistribution::large_logits, "large_logits"},
    {ValueDistribution::near_ties, "near_ties"}, {ValueDistribution::dominant_token, "dominant_token"},
    {ValueDistribution::all_equal, "all_equal"}, {ValueDistribution::small_integers, "small_integers"},
};

}  // namespace

std::string to_string(ValueDistribution d) {
  for (const auto& n : kDistributions)
    if (n.d == d) return n.name;
  return "?";
}

ValueDistribution parse_value_distribution(const std::string& name) {
  for (const auto& n : kDistributions)
    if (name == n.name) return n.d;
  fail("distribution: unknown value '", name,
       "' (expected uniform, large_logits, near_ties, dominant_token, all_equal, small_integers)");
}

std::string to_string(CaseKernel kernel) {
  switch (kernel) {
    case CaseKernel::decode:
      return "decode";
    case CaseKernel::prefix:
      return "prefix";
    case CaseKernel::reshape_and_cache:
      return "reshape_and_cache";
  }
  return "?";
}

const std::vector<std::string_view>& case_field_names() { return kFields; }

Case parse_case(std::string_view json_text, std::string_view source) {
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {  // syntax, or a number out of range (1e400)
    fail("case ", source, ": invalid JSON: ", e.what());
  }
  return parse_case_object(j, source);
}

Case override_field(const Case& c, std::string_view field, std::string_view value_json,
                    std::string_view id_suffix) {
  json j = json::parse(case_to_json(c));
  const std::string source = "--" + std::string(field) + " over case " + c.id;
  try {
    j[std::string(field)] = json::parse(value_json.begin(), value_json.end());
  } catch (const json::exception& e) {
    fail("case ", source, ": invalid JSON value '", value_json, "': ", e.what());
  }
  j["id"] = c.id + "-" + std::string(id_suffix);
  return parse_case_object(j, source);
}

Case load_case_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("case ", path.string(), ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_case(text.str(), path.string());
}

std::string case_to_json(const Case& c, int indent) {
  json j;
  j["id"] = c.id;
  j["kernel"] = to_string(c.kernel);
  j["num_seqs"] = c.num_seqs;
  const bool reshape = c.kernel == CaseKernel::reshape_and_cache;
  if (!reshape) j["num_heads"] = c.num_heads;
  j["num_kv_heads"] = c.num_kv_heads;
  j["head_size"] = c.head_size;
  j["block_size"] = c.block_size;
  j["dtype"] = std::string(dtype_name(c.dtype));
  j["kv_cache_dtype"] = std::string(kv_cache_dtype_name(c.kv_cache_dtype));
  j["kv_layout"] = kv_layout_name(c.kv_layout);
  j["k_scale"] = c.k_scale;
  j["v_scale"] = c.v_scale;
  if (!reshape) {
    j["scale"] = c.scale ? json(*c.scale) : json(nullptr);
    j["alibi"] = c.alibi;
    j["soft_cap"] = c.soft_cap;
    j["sliding_window"] = c.sliding_window;
  }
  j["seed"] = c.seed;
  j["num_blocks"] = c.num_blocks;
  j["seq_lens"] = c.seq_lens;
  j["max_seq_len"] = c.max_seq_len;
  j["distribution"] = to_string(c.distribution);
  if (c.kernel == CaseKernel::decode) {
    j["partition_size"] = c.partition_size;
    j["warp_size"] = c.warp_size;
    j["threads_per_cta"] = c.threads_per_cta;
  } else if (reshape) {
    j["query_lens"] = c.query_lens;
    j["padding_tokens"] = c.padding_tokens;
  } else {
    j["query_lens"] = c.query_lens;
    j["block_m"] = c.block_m;
    j["block_n"] = c.block_n;
    j["context_tile"] = c.context_tile;
    if (c.max_query_len != 0) j["max_query_len"] = c.max_query_len;
    if (!c.cache_new_tokens) j["cache_new_tokens"] = false;
    if (c.new_kv_source != NewKVSource::input) j["new_kv_source"] = new_kv_source_name(c.new_kv_source);
  }
  if (c.vllm_faithful) j["vllm_faithful"] = true;
  // Fields added after golden format 1: written only when set (see case.hpp).
  if (!c.k_head_scales.empty()) j["k_head_scales"] = c.k_head_scales;
  if (!c.v_head_scales.empty()) j["v_head_scales"] = c.v_head_scales;
  if (c.extra_table_columns != 1) j["extra_table_columns"] = c.extra_table_columns;
  if (!c.poison_unused) j["poison_unused"] = false;
  return j.dump(indent);
}

float effective_scale(const Case& c) {
  return c.scale ? static_cast<float>(*c.scale) : default_scale(c.head_size);
}

KernelConfig kernel_config(const Case& c) { return {c.warp_size, c.threads_per_cta}; }

std::string_view kv_cache_dtype_name(KVCacheDType t) {
  switch (t) {
    case KVCacheDType::auto_dtype:
      return "auto";
    case KVCacheDType::fp8_e4m3:
      return "fp8_e4m3";
    case KVCacheDType::fp8_e5m2:
      return "fp8_e5m2";
  }
  return "?";
}

KVCacheDType parse_kv_cache_dtype(std::string_view text, std::string_view what) {
  KVCacheDType t{};
  if (!try_parse_kv_cache_dtype(text, t))
    fail(what, " = ", text, ": expected auto, fp8_e4m3 (alias fp8) or fp8_e5m2");
  return t;
}

DType cache_storage_dtype(KVCacheDType t, DType dtype) {
  switch (t) {
    case KVCacheDType::fp8_e4m3:
      return DType::fp8_e4m3;
    case KVCacheDType::fp8_e5m2:
      return DType::fp8_e5m2;
    case KVCacheDType::auto_dtype:
      break;
  }
  return dtype;
}

DType Case::cache_storage_dtype() const { return cases::cache_storage_dtype(kv_cache_dtype, dtype); }

std::int32_t Case::context_len(std::size_t s) const {
  return seq_lens.at(s) - (has_new_tokens(kernel) ? query_lens.at(s) : 1);
}

std::int32_t Case::num_tokens() const {
  if (kernel == CaseKernel::decode) return num_seqs;
  std::int32_t n = 0;
  for (auto q : query_lens) n += q;
  return n;
}

std::vector<std::int32_t> Case::query_start_locs() const {
  std::vector<std::int32_t> start(static_cast<std::size_t>(num_seqs) + 1, 0);
  for (std::int32_t s = 0; s < num_seqs; ++s)
    start[static_cast<std::size_t>(s) + 1] =
        start[static_cast<std::size_t>(s)] +
        (kernel == CaseKernel::decode ? 1 : query_lens[static_cast<std::size_t>(s)]);
  return start;
}

float Case::kv_scale(CacheTensor tensor, std::int32_t kv_head) const {
  if (!is_fp8(cache_storage_dtype())) return 1.0f;
  const auto& per_head = tensor == CacheTensor::key ? k_head_scales : v_head_scales;
  const double scale = tensor == CacheTensor::key ? k_scale : v_scale;
  return static_cast<float>(per_head.empty() ? scale : per_head[static_cast<std::size_t>(kv_head)]);
}

std::vector<std::int32_t> draw_seq_lens(std::int32_t num_seqs, std::int32_t max_seq_len, std::uint64_t seed,
                                        const std::vector<std::int32_t>& query_lens) {
  // vLLM's test_paged_attention: lengths uniform in [1, MAX_SEQ_LEN], the last one = MAX_SEQ_LEN.
  // Prefix: each sequence holds at least its new tokens.
  Rng rng(seed ^ kLengthStream);
  std::vector<std::int32_t> lens(static_cast<std::size_t>(num_seqs));
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    const std::int32_t lo = query_lens.empty() ? 1 : std::max(1, query_lens[static_cast<std::size_t>(s)]);
    lens[static_cast<std::size_t>(s)] =
        s + 1 == num_seqs ? max_seq_len : static_cast<std::int32_t>(rng.between(lo, max_seq_len));
  }
  return lens;
}

std::int32_t max_num_partitions(const Case& c) {
  return c.kernel == CaseKernel::decode ? pao::max_num_partitions(c.max_seq_len, c.partition_size) : 1;
}

std::string describe(const Case& c) {
  std::ostringstream os;
  os << to_string(c.kernel) << ", " << c.num_seqs << " seqs (longest " << c.max_seq_len << "), ";
  if (c.kernel == CaseKernel::reshape_and_cache)
    os << c.num_tokens() << " tokens written + " << c.padding_tokens << " padding, kv heads "
       << c.num_kv_heads;
  else
    os << "heads " << c.num_heads << "/" << c.num_kv_heads;
  os << ", head_size " << c.head_size << ", block " << c.block_size << ", " << dtype_name(c.dtype)
     << " (cache " << kv_cache_dtype_name(c.kv_cache_dtype);
  if (c.kv_layout != KVLayout::vllm) os << ", " << kv_layout_name(c.kv_layout);
  os << ")";
  if (c.kernel == CaseKernel::decode) os << ", partition " << c.partition_size;
  if (c.alibi) os << ", alibi";
  if (c.soft_cap > 0) os << ", soft_cap " << c.soft_cap;
  if (c.sliding_window > 0) os << ", window " << c.sliding_window;
  if (c.kernel == CaseKernel::prefix && c.new_kv_source == NewKVSource::cache)
    os << ", new K/V from the cache";
  if (c.vllm_faithful) os << ", vLLM-faithful";
  os << ", seed " << c.seed;
  return os.str();
}

bool operator==(const Case& a, const Case& b) {
  return a.id == b.id && a.kernel == b.kernel && a.num_seqs == b.num_seqs && a.num_heads == b.num_heads &&
         a.num_kv_heads == b.num_kv_heads && a.head_size == b.head_size && a.block_size == b.block_size &&
         a.dtype == b.dtype && a.kv_cache_dtype == b.kv_cache_dtype && a.kv_layout == b.kv_layout &&
         a.k_scale == b.k_scale && a.v_scale == b.v_scale && a.scale == b.scale && a.alibi == b.alibi &&
         a.soft_cap == b.soft_cap && a.sliding_window == b.sliding_window &&
         a.partition_size == b.partition_size && a.seed == b.seed && a.num_blocks == b.num_blocks &&
         a.seq_lens == b.seq_lens && a.max_seq_len == b.max_seq_len && a.query_lens == b.query_lens &&
         a.distribution == b.distribution && a.warp_size == b.warp_size &&
         a.threads_per_cta == b.threads_per_cta && a.block_m == b.block_m && a.block_n == b.block_n &&
         a.context_tile == b.context_tile && a.k_head_scales == b.k_head_scales &&
         a.v_head_scales == b.v_head_scales && a.max_query_len == b.max_query_len &&
         a.cache_new_tokens == b.cache_new_tokens && a.extra_table_columns == b.extra_table_columns &&
         a.poison_unused == b.poison_unused && a.new_kv_source == b.new_kv_source &&
         a.vllm_faithful == b.vllm_faithful && a.padding_tokens == b.padding_tokens;
}

}  // namespace pao::cases

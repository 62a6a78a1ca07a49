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
#include "pao/core/memory.hpp"
#include "pao/core/random.hpp"
#include "pao/core/suggest.hpp"
#include "pao/io/json_read.hpp"
#include "pao/kinds/kernel_kind.hpp"
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
    "kv_quant",
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
/// Fields of the attention kinds that a kind without attention (reshape_and_cache) does not take.
const std::vector<std::string_view> kAttentionOnly = {"num_heads", "scale",          "alibi",
                                                      "soft_cap",  "sliding_window", "vllm_faithful"};

/// The seq_lens drawn for a case that gives only max_seq_len come from their own stream, so that
/// they never shift the values make_decode_case / make_prefix_case draw from the seed.
constexpr std::uint64_t kLengthStream = 0x6c656e73;  // "lens"

/// What a case holds per sequence, for the memory check before its lists are built: seq_lens and
/// query_lens (int32), and the copies a suite's expansion and a workload make of them.
constexpr double kBytesPerSequence = 32;

/// vLLM's kv_cache_dtype "fp8" means e4m3.
constexpr std::string_view kFp8Alias = "fp8";
constexpr DType kFp8AliasOf = DType::fp8_e4m3;

/// vLLM's kv_cache_dtype names (pao/cases/case.hpp): "auto", "fp8", every cache format.
bool try_parse_kv_cache_dtype(std::string_view text, std::optional<DType>& out) {
  if (text == "auto") {
    out.reset();
    return true;
  }
  if (text == kFp8Alias) text = dtype_name(kFp8AliasOf);
  for (const auto& d : kDTypes)
    if (d.cache_format && d.name == text) {
      out = d.type;
      return true;
    }
  return false;
}

bool contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// Typed, range-checked access to the fields of one case object (the kinds read theirs through
/// cases::FieldReader).
class Fields final : public FieldReader {
 public:
  Fields(const json& j, std::string_view source) : j_(j), source_(source) {}

  bool has(std::string_view name) const override {
    return j_.contains(name) && !j_.at(std::string(name)).is_null();
  }
  const json& at(std::string_view name) const { return j_.at(std::string(name)); }

  [[noreturn]] void bad(std::string_view name, const std::string& rule) const override {
    fail("case ", source_, ": field '", name, "' ", rule);
  }

  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
    const json& v = at(name);
    if (!v.is_number_integer()) bad(name, "must be an integer, got " + json_excerpt(v));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      bad(name, "= " + json_excerpt(v) + " is out of range [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi)
      bad(name, "= " + json_excerpt(v) + " is out of range [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
    return x;
  }
  std::int32_t i32(std::string_view name, std::int64_t lo, std::int32_t fallback) const override {
    return has(name) ? static_cast<std::int32_t>(integer(name, lo, std::numeric_limits<std::int32_t>::max()))
                     : fallback;
  }
  double number(std::string_view name, double fallback) const {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_number()) bad(name, "must be a number, got " + json_excerpt(v));
    return v.get<double>();
  }
  bool boolean(std::string_view name, bool fallback) const override {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_boolean()) bad(name, "must be true or false, got " + json_excerpt(v));
    return v.get<bool>();
  }
  std::string string(std::string_view name, std::string fallback) const override {
    if (!has(name)) return fallback;
    const json& v = at(name);
    if (!v.is_string()) bad(name, "must be a string, got " + json_excerpt(v));
    return v.get<std::string>();
  }
  /// A list of `count` positive finite f32 values (per-KV-head scales).
  std::vector<double> scales(std::string_view name, std::int32_t count) const {
    const json& v = at(name);
    if (!v.is_array() || v.size() != static_cast<std::size_t>(count))
      bad(name,
          "must be a list of num_kv_heads = " + std::to_string(count) + " numbers, got " + json_excerpt(v));
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double x = v[i].is_number() ? v[i].get<double>() : -1.0;
      if (!(x > 0) || !std::isfinite(x) || x > std::numeric_limits<float>::max())
        bad(name,
            "[" + std::to_string(i) + "] = " + json_excerpt(v[i]) + ": must be a positive finite f32 value");
      out.push_back(x);
    }
    return out;
  }
  /// num_seqs, checked against the memory limit before the per-sequence lists are built from it
  /// (a broadcast length, lengths drawn from max_seq_len): 2e9 sequences are 8 GB of lengths alone.
  std::int32_t num_seqs() const {
    const std::int32_t n = i32("num_seqs", 1, 0);
    require_memory(
        "case " + source_ + ": field 'num_seqs' = " + std::to_string(n) + " (its per-sequence lists)",
        static_cast<double>(n) * kBytesPerSequence, "lower num_seqs");
    return n;
  }
  std::vector<std::int32_t> lengths(std::string_view name) const override {
    const json& v = at(name);
    if (!v.is_array() || v.empty()) bad(name, "must be a non-empty list of integers");
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0 ||
          v[i].get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
        bad(name,
            "[" + std::to_string(i) + "] = " + json_excerpt(v[i]) + ": must be an integer in [0, 2^31)");
      out.push_back(v[i].get<std::int32_t>());
    }
    return out;
  }

 private:
  const json& j_;
  std::string source_;
};

/// "prefix, reshape_and_cache and write_and_attend": the kinds that take `field` as one of their own.
std::string kinds_taking(std::string_view field) {
  std::vector<std::string> takers;
  for (const kinds::KernelKind* k : kinds::kernel_kinds()) {
    const auto& own = k->traits().fields;
    if (std::find(own.begin(), own.end(), field) != own.end()) takers.emplace_back(k->name());
  }
  std::string out;
  for (std::size_t i = 0; i < takers.size(); ++i) {
    if (i) out += i + 1 == takers.size() ? " and " : ", ";
    out += takers[i];
  }
  return out;
}

void check_field_names(const json& j, std::string_view source, const kinds::KernelKind& kind) {
  const auto& own = kind.traits().fields;
  for (const auto& [key, value] : j.items()) {
    if (!contains(kFields, key)) {
      const std::string best = closest_name(key, std::vector<std::string>(kFields.begin(), kFields.end()), 2);
      std::ostringstream known;
      for (std::size_t i = 0; i < kFields.size(); ++i) known << (i ? ", " : "") << kFields[i];
      fail("case ", source, ": unknown field '", excerpt(key), "'",
           best.empty() ? std::string() : " (did you mean '" + best + "'?)", "; known fields: ", known.str());
    }
    const std::string takers = kinds_taking(key);
    if (!takers.empty() && std::find(own.begin(), own.end(), key) == own.end())
      fail("case ", source, ": field '", key, "' applies to ", takers, " cases only (this case has kernel \"",
           kind.name(), "\")");
    if (!kind.traits().attends && contains(kAttentionOnly, key))
      fail("case ", source, ": field '", key, "' applies to attention kernels (this case has kernel \"",
           kind.name(), "\")");
  }
}

DType parse_activation(const Fields& f, std::string_view name) {
  const std::string s = f.string(name, "");
  if (s.empty()) f.bad(name, "is required: f32, f16 or bf16");
  if (s == "f32") return DType::f32;
  if (s == "f16") return DType::f16;
  if (s == "bf16") return DType::bf16;
  f.bad(name, "= \"" + excerpt(s) + "\": expected f32, f16 or bf16");
}

/// One length for every sequence: "num_seqs": 128 with "seq_lens": [4096] (or "query_lens": [512]).
void broadcast(const Fields& f, std::vector<std::int32_t>& lengths) {
  if (lengths.size() == 1 && f.has("num_seqs"))
    lengths.assign(static_cast<std::size_t>(f.num_seqs()), lengths.front());
}

void resolve_lengths(const Fields& f, Case& c) {
  const bool given = f.has("seq_lens");
  const bool new_tokens = kinds::kind_of(c).traits().new_tokens;
  if (new_tokens) {
    if (!f.has("query_lens"))
      f.bad("query_lens", "is required for " + to_string(c.kernel) + " cases (new tokens per sequence)");
    c.query_lens = f.lengths("query_lens");
    broadcast(f, c.query_lens);
  }
  if (given) {
    c.seq_lens = f.lengths("seq_lens");
    broadcast(f, c.seq_lens);
  } else if (!f.has("max_seq_len")) {
    f.bad("seq_lens", "is required (or max_seq_len, for lengths drawn from the seed)");
  }
  const std::size_t declared = new_tokens ? c.query_lens.size() : c.seq_lens.size();
  if (f.has("num_seqs")) {
    c.num_seqs = f.num_seqs();
    if (declared != 0 && static_cast<std::size_t>(c.num_seqs) != declared)
      f.bad("num_seqs", "= " + std::to_string(c.num_seqs) + " but " +
                            (new_tokens ? "query_lens" : "seq_lens") + " has " + std::to_string(declared) +
                            " entries");
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
  if (new_tokens) {
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
      f.bad("id",
            "= \"" + excerpt(id) + "\": only letters, digits, '-', '_' and '.' (it names the golden file)");
  }
  if (id.front() == '.') f.bad("id", "= \"" + excerpt(id) + "\" must not start with '.'");
}

/// A case's "kv_quant": {"key": "by_channel", "value": "by_token" | "group_32", "scale_dtype":
/// "f32" | "f16", "zero_point_dtype": "f32" | "f16", "rounding": "half_even" | "half_away"};
/// every key optional (OpenVINO's u8 cache by default), none other allowed.
KVQuant read_kv_quant(const Fields& f, std::int32_t head_size) {
  const json& j = f.at("kv_quant");
  if (!j.is_object()) f.bad("kv_quant", "must be an object, got " + json_excerpt(j));
  static constexpr std::string_view kKeys[] = {"key",      "value", "scale_dtype", "zero_point_dtype",
                                               "rounding", "rule"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      f.bad("kv_quant", "unknown key \"" + excerpt(key) +
                            "\" (expected key, value, scale_dtype, zero_point_dtype, rounding, rule)");
    if (!value.is_string())
      f.bad("kv_quant", "\"" + excerpt(key) + "\" must be a string, got " + json_excerpt(value));
  }
  auto text = [&](const char* key, const char* fallback) {
    return j.contains(key) ? j.at(key).get<std::string>() : std::string(fallback);
  };
  KVQuant q;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
    const char* key = t == CacheTensor::key ? "key" : "value";
    const std::string v = text(key, to_string(q.of(t)).c_str());
    const auto parsed = parse_tensor_quant(v);
    if (!parsed)
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) +
                            "\": expected \"by_token\", \"by_channel\" or \"group_<G>\" (G dims per scale)");
    if (const auto rule = tensor_quant_rule(*parsed, head_size))
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) + "\": " + *rule);
    (t == CacheTensor::key ? q.key : q.value) = *parsed;
  }
  for (const char* key : {"scale_dtype", "zero_point_dtype"}) {
    const std::string v = text(key, "f32");
    DType d = DType::f32;
    try {
      d = parse_dtype(v);
    } catch (const Error&) {
      d = DType::f64;  // refused below
    }
    if (d != DType::f32 && d != DType::f16)
      f.bad("kv_quant", std::string("\"") + key + "\" = \"" + excerpt(v) + "\": expected \"f32\" or \"f16\"");
    (key[0] == 's' ? q.scale_dtype : q.zero_point_dtype) = d;
  }
  const std::string r = text("rounding", "half_even");
  const auto rounding = parse_rounding(r);
  if (!rounding)
    f.bad("kv_quant", "\"rounding\" = \"" + excerpt(r) + "\": expected \"half_even\" or \"half_away\"");
  q.rounding = *rounding;
  const std::string rule = text("rule", "minmax_zero");
  const auto parsed_rule = parse_rule(rule);
  if (!parsed_rule)
    f.bad("kv_quant", "\"rule\" = \"" + excerpt(rule) + "\": expected \"minmax_zero\" or \"openvino\"");
  q.rule = *parsed_rule;
  return q;
}

json kv_quant_json(const KVQuant& q) {
  json j;
  j["key"] = to_string(q.key);
  j["value"] = to_string(q.value);
  j["scale_dtype"] = std::string(dtype_name(q.scale_dtype));
  j["zero_point_dtype"] = std::string(dtype_name(q.zero_point_dtype));
  j["rounding"] = rounding_name(q.rounding);
  j["rule"] = rule_name(q.rule);
  return j;
}

Case parse_case_object(const json& j, std::string_view source) {
  if (!j.is_object()) fail("case ", source, ": expected a JSON object, got ", j.type_name());
  Fields f(j, source);
  Case c;
  c.seq_lens.clear();  // resolve_lengths reads them from the JSON or draws them
  const std::string kernel = f.string("kernel", "decode");
  const kinds::KernelKind* kind = kinds::find_kind(kernel);
  if (kind == nullptr) f.bad("kernel", "= \"" + excerpt(kernel) + "\": expected " + kinds::kind_names());
  c.kernel = kind->traits().id;
  check_field_names(j, source, *kind);

  const bool attends = kind->traits().attends;  // without attention there are no query heads
  if (!attends && !f.has("num_kv_heads")) f.bad("num_kv_heads", "is required");
  if (attends && !f.has("num_heads")) f.bad("num_heads", "is required");
  if (!f.has("head_size")) f.bad("head_size", "is required");
  c.num_heads = attends ? f.i32("num_heads", 1, 0) : f.i32("num_kv_heads", 1, 0);
  c.num_kv_heads = f.i32("num_kv_heads", 1, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0)
    f.bad("num_heads", "= " + std::to_string(c.num_heads) +
                           " is not a multiple of num_kv_heads = " + std::to_string(c.num_kv_heads));
  c.head_size = f.i32("head_size", 1, 0);
  // vLLM's CUDA paged attention dispatches a fixed list; its Triton prefix kernel pads any size.
  if (!kind->traits().any_head_size && !is_supported_head_size(c.head_size))
    f.bad("head_size", "= " + std::to_string(c.head_size) + " is not one of vLLM's decode head sizes (" +
                           supported_head_sizes_text() + ")");
  c.block_size = f.i32("block_size", 1, 16);
  c.dtype = parse_activation(f, "dtype");

  const std::string cache = f.string("kv_cache_dtype", "auto");
  const bool u4 = cache == "u4";  // a u8 cache of 4-bit codes
  try {
    set_kv_cache_dtype(c, cache);
  } catch (const Error&) {
    f.bad("kv_cache_dtype",
          "= \"" + excerpt(cache) + "\": expected one of " + kv_cache_dtype_choices() + ", u4");
  }
  const std::string layout = f.string("kv_layout", "vllm");
  if (!try_parse_kv_layout(layout, c.kv_layout))
    f.bad("kv_layout", "= \"" + excerpt(layout) + "\": expected \"vllm\", \"nhd\" or \"hnd\"");
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
      f.bad(name, "= " + json_excerpt(f.at(name)) + ": must be a positive finite f32 value");
    return v;
  };
  c.k_scale = positive("k_scale", 1.0);
  c.v_scale = positive("v_scale", 1.0);
  if (f.has("scale")) c.scale = positive("scale", 1.0);
  c.alibi = f.boolean("alibi", false);
  c.soft_cap = f.number("soft_cap", 0.0);
  if (!(c.soft_cap >= 0) || c.soft_cap > std::numeric_limits<float>::max())
    f.bad("soft_cap", "= " + json_excerpt(f.at("soft_cap")) + ": must be >= 0 (0 = off)");
  c.sliding_window = f.i32("sliding_window", 0, 0);
  if (f.has("seed")) {
    const json& v = f.at("seed");
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      f.bad("seed", "must be an integer in [0, 2^64), got " + json_excerpt(v));
    c.seed = v.get<std::uint64_t>();
  }
  c.num_blocks = f.i32("num_blocks", 0, 0);
  c.distribution = [&] {
    const std::string d = f.string("distribution", "uniform");
    try {
      return parse_value_distribution(d);
    } catch (const Error& e) {
      f.bad("distribution", std::string("= \"") + excerpt(d) + "\": " + e.what());
    }
  }();

  kind->read_fields(f, c);
  c.vllm_faithful = f.boolean("vllm_faithful", false);
  if (c.vllm_faithful && is_integer_cache(c.cache_storage_dtype()))
    f.bad("vllm_faithful", "vLLM's kernels have no integer KV cache: there is no vLLM computation of a " +
                               cache + " case to be faithful to");
  c.extra_table_columns = f.i32("extra_table_columns", 0, 1);
  c.poison_unused = f.boolean("poison_unused", true);
  for (const char* name : {"k_head_scales", "v_head_scales"}) {
    if (!f.has(name)) continue;
    if (!c.fp8_cache())
      f.bad(name,
            "applies to fp8 caches only (kv_cache_dtype is \"" + std::string(kv_cache_dtype_name(c)) + "\")");
    (name[0] == 'k' ? c.k_head_scales : c.v_head_scales) = f.scales(name, c.num_kv_heads);
  }
  if (c.integer_cache())
    for (const char* name : {"k_scale", "v_scale"})
      if (f.has(name) && f.number(name, 1.0) != 1.0)  // 1: what case_to_json writes for every cache
        f.bad(name, "applies to fp8 caches only: an integer cache (" + std::string(kv_cache_dtype_name(c)) +
                        ") has a scale per group, in the golden's key_cache_scale / value_cache_scale");
  if (f.has("kv_quant")) {
    if (!c.integer_cache())
      f.bad("kv_quant", "applies to integer caches only (kv_cache_dtype is \"" +
                            std::string(kv_cache_dtype_name(c)) + "\"; u8 or i8 take it)");
    c.kv_quant = read_kv_quant(f, c.head_size);
  }
  if (u4) {
    c.kv_quant.bits = 4;
    if (c.kv_layout == KVLayout::vllm)
      f.bad("kv_layout",
            "= \"vllm\": a u4 cache packs pairs of dims, which vLLM's value layout [num_blocks, "
            "num_kv_heads, head_size, block_size] does not keep together; use \"nhd\" or \"hnd\"");
    if (c.head_size % 2 != 0)
      f.bad("head_size", "= " + std::to_string(c.head_size) + ": a u4 cache packs pairs of dims");
  }
  if (c.integer_cache())
    if (const auto rule = quant_rule_conditions(c.kv_quant, c.cache_storage_dtype(), c.head_size))
      f.bad("kv_quant", *rule);
  if (c.integer_cache() && !f.has("kv_quant")) {
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      if (const auto rule = tensor_quant_rule(c.kv_quant.of(t), c.head_size)) f.bad("kv_quant", *rule);
  }
  resolve_lengths(f, c);
  if (c.max_query_len > 0)  // the kinds that size a grid by it
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
    {ValueDistribution::constant, "constant"},
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
  fail("distribution: unknown value '", excerpt(name),
       "' (expected uniform, large_logits, near_ties, dominant_token, all_equal, small_integers, constant)");
}

std::string to_string(CaseKernel kernel) { return std::string(kinds::kind_of(kernel).name()); }

const std::vector<std::string_view>& case_field_names() { return kFields; }

Case parse_case(std::string_view json_text, std::string_view source) {
  return parse_case_object(parse_json(json_text, "case " + std::string(source)), source);
}

Case override_field(const Case& c, std::string_view field, std::string_view value_json,
                    std::string_view id_suffix) {
  json j = json::parse(case_to_json(c));
  const std::string source = "--" + std::string(field) + " over case " + c.id;
  j[std::string(field)] = parse_json(value_json, "case " + source + ": value '" + excerpt(value_json) + "'");
  j["id"] = c.id + "-" + std::string(id_suffix);
  Case out = parse_case_object(j, source);
  // An id pao derived is derived again, so that it names the new value only (not "-p128-...-p64");
  // an id the case gave keeps it, with the suffix.
  for (const auto& [seq_lens_given, max_seq_len_given] :
       {std::pair{true, false}, {true, true}, {false, false}})
    if (c.id == derive_case_id(c, seq_lens_given, max_seq_len_given)) {
      out.id = derive_case_id(out, seq_lens_given, max_seq_len_given);
      break;
    }
  return out;
}

Case load_case_file(const std::filesystem::path& path) {
  return parse_case(read_text_file(path, "case " + path.string()), path.string());
}

void write_launch_shape(FieldWriter& w, const LaunchShape& s, bool with_heads) {
  w.put_int("num_seqs", s.num_seqs);
  if (with_heads) w.put_int("num_heads", s.num_heads);
  w.put_int("num_kv_heads", s.num_kv_heads);
  w.put_int("head_size", s.head_size);
  w.put_int("block_size", s.block_size);
}

std::string case_to_json(const Case& c, int indent) {
  json j;
  j["id"] = c.id;
  j["kernel"] = to_string(c.kernel);
  const kinds::KernelKind& kind = kinds::kind_of(c);
  const bool attends = kind.traits().attends;
  JsonFieldWriter<json> fields(j);
  write_launch_shape(fields, c, attends);
  j["dtype"] = std::string(dtype_name(c.dtype));
  j["kv_cache_dtype"] = std::string(kv_cache_dtype_name(c));
  j["kv_layout"] = kv_layout_name(c.kv_layout);
  j["k_scale"] = c.k_scale;
  j["v_scale"] = c.v_scale;
  if (attends) {
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
  if (kind.traits().new_tokens) j["query_lens"] = c.query_lens;
  kind.write_fields(c, fields);
  if (c.vllm_faithful) j["vllm_faithful"] = true;
  // Fields added after golden format 1: written only when set (see case.hpp).
  if (!c.k_head_scales.empty()) j["k_head_scales"] = c.k_head_scales;
  if (!c.v_head_scales.empty()) j["v_head_scales"] = c.v_head_scales;
  if (c.extra_table_columns != 1) j["extra_table_columns"] = c.extra_table_columns;
  if (!c.poison_unused) j["poison_unused"] = false;
  if (c.integer_cache()) j["kv_quant"] = kv_quant_json(c.kv_quant);
  return j.dump(indent);
}

float effective_scale(const Case& c) {
  return c.scale ? static_cast<float>(*c.scale) : default_scale(c.head_size);
}

std::string_view kv_cache_dtype_name(std::optional<DType> t) { return t ? dtype_name(*t) : "auto"; }

std::string_view kv_cache_dtype_name(const Case& c) {
  return c.integer_cache() && c.kv_quant.bits == 4 ? "u4" : kv_cache_dtype_name(c.kv_cache_dtype);
}

std::optional<DType> parse_kv_cache_dtype(std::string_view text, std::string_view what) {
  std::optional<DType> t;
  if (!try_parse_kv_cache_dtype(text, t))
    fail(what, " = ", excerpt(text), ": expected one of ", kv_cache_dtype_choices());
  return t;
}

std::string kv_cache_dtype_choices() {
  std::string out = "auto";
  for (const auto& d : kDTypes)
    if (d.cache_format)
      out += ", " + std::string(d.name) +
             (d.type == kFp8AliasOf ? " (alias " + std::string(kFp8Alias) + ")" : "");
  return out;
}

void set_kv_cache_dtype(Case& c, std::string_view text, std::string_view what) {
  if (text == "u4") {
    c.kv_cache_dtype = DType::u8;
    c.kv_quant.bits = 4;
    return;
  }
  std::optional<DType> t;
  if (!try_parse_kv_cache_dtype(text, t))
    fail(what, " = ", excerpt(text), ": expected one of ", kv_cache_dtype_choices(), ", u4");
  c.kv_cache_dtype = t;
  c.kv_quant.bits = 8;
}

std::int32_t Case::context_len(std::size_t s) const {
  return seq_lens.at(s) - (kinds::kind_of(kernel).traits().new_tokens ? query_lens.at(s) : 1);
}

std::int32_t Case::num_tokens() const {
  if (!kinds::kind_of(kernel).traits().new_tokens) return num_seqs;  // one new token per sequence
  std::int32_t n = 0;
  for (auto q : query_lens) n += q;
  return n;
}

std::vector<std::int32_t> Case::query_start_locs() const {
  std::vector<std::int32_t> start(static_cast<std::size_t>(num_seqs) + 1, 0);
  for (std::int32_t s = 0; s < num_seqs; ++s)
    start[static_cast<std::size_t>(s) + 1] =
        start[static_cast<std::size_t>(s)] +
        (kinds::kind_of(kernel).traits().new_tokens ? query_lens[static_cast<std::size_t>(s)] : 1);
  return start;
}

float Case::kv_scale(CacheTensor tensor, std::int32_t kv_head) const {
  if (!fp8_cache()) return 1.0f;
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
  return kinds::kind_of(c).traits().partitioned ? pao::max_num_partitions(c.max_seq_len, c.partition_size)
                                                : 1;
}

std::string describe(const Case& c) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  std::ostringstream os;
  os << kind.name() << ", " << c.num_seqs << " seqs (longest " << c.max_seq_len << "), ";
  if (kind.traits().attends)
    os << "heads " << c.num_heads << "/" << c.num_kv_heads;
  else
    os << "kv heads " << c.num_kv_heads;
  os << ", head_size " << c.head_size << ", block " << c.block_size << ", " << dtype_name(c.dtype)
     << " (cache " << kv_cache_dtype_name(c);
  if (c.kv_layout != KVLayout::vllm) os << ", " << kv_layout_name(c.kv_layout);
  os << ")" << kind.describe(c);
  if (c.alibi) os << ", alibi";
  if (c.soft_cap > 0) os << ", soft_cap " << c.soft_cap;
  if (c.sliding_window > 0) os << ", window " << c.sliding_window;
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
         static_cast<const KernelTuning&>(a) == b && a.seed == b.seed && a.num_blocks == b.num_blocks &&
         a.seq_lens == b.seq_lens && a.max_seq_len == b.max_seq_len && a.query_lens == b.query_lens &&
         a.distribution == b.distribution && a.k_head_scales == b.k_head_scales &&
         a.v_head_scales == b.v_head_scales && a.max_query_len == b.max_query_len &&
         a.cache_new_tokens == b.cache_new_tokens && a.extra_table_columns == b.extra_table_columns &&
         a.poison_unused == b.poison_unused && a.new_kv_source == b.new_kv_source &&
         a.vllm_faithful == b.vllm_faithful && a.padding_tokens == b.padding_tokens &&
         a.kv_quant == b.kv_quant;
}

}  // namespace pao::cases

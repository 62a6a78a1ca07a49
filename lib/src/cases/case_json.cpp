// Case JSON: strict parsing (unknown fields, wrong types and inconsistent values are errors that
// name the field), vLLM's defaults, seeded sequence lengths, and the canonical JSON writer.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <variant>

#include "cases/field_input.hpp"
#include "pao/cases/case.hpp"
#include "pao/cases/case_schema.hpp"
#include "pao/core/error.hpp"
#include "pao/core/random.hpp"
#include "pao/core/suggest.hpp"
#include "pao/io/json_read.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cases {

namespace {

using nlohmann::json;

/// The seq_lens drawn for a case that gives only max_seq_len come from their own stream, so that
/// they never shift the values make_decode_case / make_prefix_case draw from the seed.
constexpr std::uint64_t kLengthStream = 0x6c656e73;  // "lens"

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

/// Every field of `j` is one of the schema's and taken by `kind`.
void check_field_names(const json& j, std::string_view source, const kinds::KernelKind& kind) {
  for (const auto& [key, value] : j.items()) {
    const CaseField* field = find_case_field(key);
    if (field == nullptr) {
      std::vector<std::string> names;
      for (const CaseField& f : case_fields()) names.emplace_back(f.name);
      std::sort(names.begin(), names.end());
      const std::string best = closest_name(key, names, 2);
      std::string known;
      for (std::size_t i = 0; i < names.size(); ++i) known += (i ? ", " : "") + names[i];
      fail("case ", source, ": unknown field '", excerpt(key), "'",
           best.empty() ? std::string() : " (did you mean '" + best + "'?)", "; known fields: ", known);
    }
    if (kind_takes(kind, *field)) continue;
    if (field->scope == FieldScope::attention)
      fail("case ", source, ": field '", key, "' applies to attention kernels (this case has kernel \"",
           kind.name(), "\")");
    fail("case ", source, ": field '", key, "' applies to ", field_takers(*field),
         " cases only (this case has kernel \"", kind.name(), "\")");
  }
}

/// The lengths, read together once every other field is known (they may be drawn from the seed):
/// query_lens, seq_lens, num_seqs and max_seq_len, then max_query_len against them.
void resolve_lengths(const FieldInput& f, Case& c) {
  const bool given = f.has("seq_lens");
  const bool new_tokens = kinds::kind_of(c).traits().new_tokens;
  if (new_tokens) {
    if (!f.has("query_lens"))
      f.bad("query_lens", "is required for " + to_string(c.kernel) + " cases (new tokens per sequence)");
    c.query_lens = f.lengths("query_lens");
  }
  if (given) {
    c.seq_lens = f.lengths("seq_lens");
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
  if (c.max_query_len > 0)  // the kinds that size a grid by it
    for (std::size_t s = 0; s < c.query_lens.size(); ++s)
      if (c.query_lens[s] > c.max_query_len)
        f.bad("max_query_len", "= " + std::to_string(c.max_query_len) + " is less than query_lens[" +
                                   std::to_string(s) + "] = " + std::to_string(c.query_lens[s]));
}

void check_id(const FieldInput& f, const std::string& id) {
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

Case parse_case_object(const json& j, std::string_view source) {
  if (!j.is_object()) fail("case ", source, ": expected a JSON object, got ", j.type_name());
  const FieldInput in(j, source);
  Case c;
  c.seq_lens.clear();  // resolve_lengths reads them from the JSON or draws them
  const std::string kernel = in.string("kernel", "decode");
  const kinds::KernelKind* kind = kinds::find_kind(kernel);
  if (kind == nullptr) in.bad("kernel", "= \"" + excerpt(kernel) + "\": expected " + kinds::kind_names());
  c.kernel = kind->traits().id;
  check_field_names(j, source, *kind);
  for (const CaseField& f : case_fields())
    if (f.read != nullptr && kind_takes(*kind, f)) f.read(f, in, c);
  resolve_lengths(in, c);
  if (in.has("id")) {
    c.id = in.string("id", "");
    check_id(in, c.id);
  } else {
    c.id = derive_case_id(c, in.has("seq_lens"), in.has("max_seq_len"));
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

Case parse_case(std::string_view json_text, std::string_view source) {
  return parse_case_object(parse_json(json_text, "case " + std::string(source)), source);
}

Case override_field(const Case& c, std::string_view field, const FieldValue& value,
                    std::string_view id_suffix) {
  const std::string source = "--" + std::string(field) + " over case " + c.id;
  const CaseField* f = find_case_field(field);
  if (f == nullptr) fail("case ", source, ": no field '", excerpt(field), "'");
  json j = json::parse(case_to_json(c));
  const bool fits = std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::int64_t>)
          return f->type == FieldType::integer || f->type == FieldType::number;
        if constexpr (std::is_same_v<V, double>) return f->type == FieldType::number;
        if constexpr (std::is_same_v<V, bool>) return f->type == FieldType::boolean;
        if constexpr (std::is_same_v<V, std::string>) return f->type == FieldType::text;
      },
      value);
  if (!fits) fail("case ", source, ": field '", field, "' is of type ", to_string(f->type));
  std::visit([&](const auto& v) { j[std::string(field)] = v; }, value);
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

std::string case_to_json(const Case& c, int indent) {
  json j = json::object();
  const kinds::KernelKind& kind = kinds::kind_of(c);
  for (const CaseField& f : case_fields())
    if (kind_takes(kind, f)) f.write(f, c, j);
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

namespace {

/// The new tokens of sequence `s`: its query_lens for a kind of new tokens, else the one token a
/// decode step adds.
std::int32_t new_tokens_of(const Case& c, std::size_t s) {
  return kinds::kind_of(c.kernel).traits().new_tokens ? c.query_lens.at(s) : 1;
}

}  // namespace

std::int32_t Case::context_len(std::size_t s) const { return seq_lens.at(s) - new_tokens_of(*this, s); }

std::int32_t Case::num_tokens() const {
  if (!kinds::kind_of(kernel).traits().new_tokens) return num_seqs;  // one new token per sequence
  std::int32_t n = 0;
  for (auto q : query_lens) n += q;
  return n;
}

std::vector<std::int32_t> Case::query_start_locs() const {
  std::vector<std::int32_t> start(static_cast<std::size_t>(num_seqs) + 1, 0);
  for (std::size_t s = 0; s < static_cast<std::size_t>(num_seqs); ++s)
    start[s + 1] = start[s] + new_tokens_of(*this, s);
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
  return kinds::kind_of(c).partitioned() ? pao::max_num_partitions(c.max_seq_len, c.partition_size) : 1;
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
  std::string out = os.str();
  for (const CaseField& f : case_fields())
    if (f.describe != nullptr && kind_takes(kind, f)) f.describe(f, c, out);
  return out;
}

bool operator==(const Case& a, const Case& b) {
  const auto& fields = case_fields();
  return std::all_of(fields.begin(), fields.end(), [&](const CaseField& f) { return f.equal(a, b); });
}

}  // namespace pao::cases

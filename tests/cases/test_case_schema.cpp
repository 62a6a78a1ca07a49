// The case schema (pao/cases/case_schema.hpp): every field one row, and the parser, writer,
// operator==, ids and docs/golden.md all driven by it.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "pao/cases/case_schema.hpp"
#include "pao/core/error.hpp"
#include "pao/kinds/kernel_kind.hpp"

using namespace pao;
using namespace pao::cases;

namespace {

/// A case of each kind, every field at its default except those required.
const char* kBase[] = {
    R"({"kernel": "decode", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3, 17]})",
    R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3, 17], "query_lens": [2, 5]})",
    R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3, 17], "query_lens": [2, 5]})",
    R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3, 17], "query_lens": [2, 5]})",
};

/// A value other than the default for every field a kind may set with override_field, with what
/// else it needs (an fp8 cache for per-head scales, an integer cache for kv_quant).
struct Change {
  const char* field;
  const char* json;                  // the case's fields changed, as JSON members
  const char* new_tokens = nullptr;  // the same for a kind with new tokens, when it differs
};
const Change kChanges[] = {
    {"num_heads", R"("num_heads": 8)"},
    {"num_kv_heads", R"("num_kv_heads": 1)"},
    {"head_size", R"("head_size": 128)"},
    {"block_size", R"("block_size": 32)"},
    {"dtype", R"("dtype": "bf16")"},
    {"kv_cache_dtype", R"("kv_cache_dtype": "fp8_e5m2")"},
    {"kv_quant", R"("kv_cache_dtype": "u8", "kv_quant": {"key": "by_token"})"},
    {"kv_layout", R"("kv_layout": "nhd")"},
    {"alibi", R"("alibi": true)"},
    {"soft_cap", R"("soft_cap": 30)"},
    {"sliding_window", R"("sliding_window": 8)"},
    {"scale", R"("scale": 0.5)"},
    {"k_scale", R"("kv_cache_dtype": "fp8", "k_scale": 0.5)"},
    {"v_scale", R"("kv_cache_dtype": "fp8", "v_scale": 0.5)"},
    {"k_head_scales", R"("kv_cache_dtype": "fp8", "k_head_scales": [0.5, 2])"},
    {"v_head_scales", R"("kv_cache_dtype": "fp8", "v_head_scales": [0.5, 2])"},
    {"partition_size", R"("partition_size": 256)"},
    {"warp_size", R"("warp_size": 64)"},
    {"threads_per_cta", R"("threads_per_cta": 256)"},
    {"block_m", R"("block_m": 64)"},
    {"block_n", R"("block_n": 32)"},
    {"context_tile", R"("context_tile": 16)"},
    {"distribution", R"("distribution": "large_logits")"},
    {"num_blocks", R"("num_blocks": 40)"},
    {"max_query_len", R"("max_query_len": 9)"},
    {"cache_new_tokens", R"("cache_new_tokens": false)"},
    {"extra_table_columns", R"("extra_table_columns": 3)"},
    {"poison_unused", R"("poison_unused": false)"},
    {"new_kv_source", R"("new_kv_source": "cache")"},
    {"vllm_faithful", R"("sliding_window": 8, "vllm_faithful": true)"},
    {"padding_tokens", R"("padding_tokens": 5)"},
    {"query_lens", R"("query_lens": [1, 5])"},
    {"seq_lens", R"("seq_lens": [4, 17])"},
    {"max_seq_len", R"("max_seq_len": 40)"},
    {"num_seqs", R"("num_seqs": 1, "seq_lens": [17])",
     R"("num_seqs": 1, "seq_lens": [17], "query_lens": [5])"},
    {"seed", R"("seed": 7)"},
    {"id", R"("id": "mine")"},
};

std::string with(const std::string& base, const char* members) {
  return base.substr(0, base.size() - 1) + ", " + members + "}";
}

}  // namespace

TEST_CASE("the schema: one row per field, each with its hooks") {
  std::set<std::string_view> names;
  for (const CaseField& f : case_fields()) {
    CAPTURE(f.name);
    CHECK(names.insert(f.name).second);
    CHECK((f.write != nullptr && f.equal != nullptr));
    CHECK_FALSE(f.doc.empty());
    CHECK(find_case_field(f.name) == &f);
  }
  CHECK(find_case_field("head_sise") == nullptr);
  // Every field has a change below (a new field needs one); the kernel is what the bases vary.
  std::set<std::string_view> changed{"kernel"};
  for (const Change& ch : kChanges) changed.insert(ch.field);
  CHECK(changed == names);
}

TEST_CASE("every field of every kind: read, written back, compared, and in the derived id") {
  for (const char* base_json : kBase) {
    const Case base = parse_case(base_json, "base.json");
    const kinds::KernelKind& kind = kinds::kind_of(base);
    for (const Change& ch : kChanges) {
      const CaseField& f = *find_case_field(ch.field);
      if (!kind_takes(kind, f)) continue;
      CAPTURE(kind.name());
      CAPTURE(ch.field);
      const char* members = ch.new_tokens != nullptr && kind.traits().new_tokens ? ch.new_tokens : ch.json;
      const Case changed = parse_case(with(base_json, members), "changed.json");
      CHECK_FALSE(f.equal(base, changed));  // the row's own comparison sees it
      CHECK_FALSE(base == changed);         // and so does the case's
      CHECK(parse_case(case_to_json(changed), "round trip") == changed);
      if (f.id != nullptr) CHECK(changed.id != base.id);  // a tag of its own (or its value's)
    }
  }
}

TEST_CASE("a field the kind does not take is named with the kinds that do") {
  const std::string decode = kBase[0];
  const auto error = [](const std::string& json) {
    try {
      parse_case(json, "t.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(
      error(with(decode, R"("block_m": 64)")) ==
      "case t.json: field 'block_m' applies to prefix and write_and_attend cases only (this case has kernel "
      "\"decode\")");
  CHECK(
      error(with(decode, R"("query_lens": [1, 2])")) ==
      "case t.json: field 'query_lens' applies to prefix, reshape_and_cache and write_and_attend cases only "
      "(this case has kernel \"decode\")");
  CHECK(
      error(with(kBase[2], R"("alibi": true)")) ==
      "case t.json: field 'alibi' applies to attention kernels (this case has kernel \"reshape_and_cache\")");
  CHECK(field_takers(*find_case_field("partition_size")) == "decode");
  CHECK(field_takers(*find_case_field("seed")) == "every kind");
}

TEST_CASE("override_field takes a value of the field's type") {
  const Case c = parse_case(kBase[0], "t.json");
  CHECK(override_field(c, "partition_size", std::int64_t{256}, "p256").partition_size == 256);
  CHECK(override_field(c, "soft_cap", std::int64_t{30}, "cap").soft_cap == 30.0);  // an integer is a number
  const std::string wrong_type =
      "case --partition_size over case " + c.id + ": field 'partition_size' is of type integer";
  CHECK_THROWS_WITH_AS(override_field(c, "partition_size", std::string("256"), "x"), wrong_type.c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(override_field(c, "alibi", 1.0, "x"), doctest::Contains("is of type boolean"), Error);
  CHECK_THROWS_WITH_AS(override_field(c, "nope", true, "x"), doctest::Contains("no field 'nope'"), Error);
}

TEST_CASE("docs/golden.md's field table is the schema's (pao golden --list-fields)") {
  std::ifstream in(std::string(PAO_SOURCE_DIR) + "/docs/golden.md");
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const std::string begin = "<!-- case-fields: pao golden --list-fields -->\n";
  const std::string end = "<!-- /case-fields -->";
  const auto a = text.find(begin);
  const auto b = text.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(text.substr(a + begin.size(), b - a - begin.size()) == case_fields_markdown());
}

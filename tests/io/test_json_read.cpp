// Tests of pao/io/json_read.hpp and pao/core/excerpt.hpp (issue 41): the nesting and size limits,
// enforced before a hostile value exists (recursion over a value 100000 deep crashed pao),
// excerpts of long values, and every reader of JSON or CSV input (case, suite,
// device, safetensors header, golden manifest, measurements) refusing deep nesting and quoting a
// long value in a short message.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/golden/manifest.hpp"
#include "pao/io/json_read.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/studies/calibrate.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string nested(std::size_t depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

/// The message of the pao::Error that `f` throws ("" and a failed check if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const pao::Error& e) {
    return e.what();
  }
  FAIL_CHECK("no pao::Error thrown");
  return "";
}

/// The most an error that quotes one input value may say: the excerpt and the words around it.
constexpr std::size_t kShortMessage = 1000;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::byte> safetensors_with_header(const std::string& header) {
  std::vector<std::byte> file(8);
  for (int i = 0; i < 8; ++i) file[i] = std::byte((std::uint64_t(header.size()) >> (8 * i)) & 0xFF);
  for (char c : header) file.push_back(std::byte(c));
  return file;
}

constexpr const char* kCase =
    R"("num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40])";

}  // namespace

TEST_CASE("parse_json: nesting up to the limit is read, one level more is refused naming the origin") {
  CHECK(pao::parse_json(nested(pao::kJsonMaxDepth), "t").is_array());
  const std::string m = error_of([] { pao::parse_json(nested(pao::kJsonMaxDepth + 1), "case a.json"); });
  CHECK(m.rfind("case a.json: ", 0) == 0);
  CHECK(m.find("nests deeper than 64 levels") != std::string::npos);
  // objects count as arrays do
  std::string objects;
  for (int i = 0; i <= pao::kJsonMaxDepth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(pao::kJsonMaxDepth + 1, '}');
  CHECK(error_of([&] { pao::parse_json(objects, "o"); }).find("nests deeper") != std::string::npos);
  CHECK(pao::parse_json(nested(3), "t", {.max_depth = 3}).is_array());
  CHECK(error_of([] { pao::parse_json(nested(4), "t", {.max_depth = 3}); }).find("deeper than 3") !=
        std::string::npos);
}

TEST_CASE("parse_json: 100000 levels are refused without a crash, in a short message (both flavours)") {
  const std::string deep = R"({"id": )" + nested(100000) + "}";
  const std::string m = error_of([&] { pao::parse_json(deep, "case deep.json"); });
  CHECK(m.find("nests deeper than 64 levels") != std::string::npos);
  CHECK(m.size() < kShortMessage);
  const std::string o = error_of([&] { pao::parse_ordered_json(deep, "suite deep.json"); });
  CHECK(o.rfind("suite deep.json: ", 0) == 0);
  CHECK(o.size() < kShortMessage);
  // unterminated: the parse stops at the limit before it reaches the end
  CHECK(error_of([] { pao::parse_json(std::string(100000, '['), "t"); }).find("nests deeper") !=
        std::string::npos);
}

TEST_CASE("parse_json: the size limit, invalid JSON in a short message, duplicate keys only when asked") {
  CHECK(error_of([] {
          pao::parse_json("[1, 2, 3]", "big.json", {.max_bytes = 8});
        }).find("big.json: 9 bytes of JSON, more than the limit of 8 bytes") != std::string::npos);
  CHECK(pao::parse_json("[1, 2]", "t", {.max_bytes = 6}).size() == 2);

  const std::string syntax = error_of([] { pao::parse_json(R"({"a": 1,})", "case a.json"); });
  CHECK(syntax.rfind("case a.json: invalid JSON: ", 0) == 0);
  CHECK(error_of([] { pao::parse_json("[1e400]", "t"); }).find("invalid JSON") != std::string::npos);
  // nlohmann quotes the token it read last: a 1 MB string that never ends
  const std::string unterminated = "[\"" + std::string(1 << 20, 'a');
  const std::string m = error_of([&] { pao::parse_json(unterminated, "long.json"); });
  CHECK(m.find("invalid JSON") != std::string::npos);
  CHECK(m.find("characters)") != std::string::npos);
  CHECK(m.size() < kShortMessage);

  CHECK(pao::parse_json(R"({"k": 1, "k": 2})", "t")["k"] == 2);
  CHECK(error_of([] {
          pao::parse_json(R"({"k": 1, "k": 2})", "h", {.unique_keys = true});
        }).find("h: duplicate key 'k'") != std::string::npos);
  // the same key in sibling objects is not a duplicate
  CHECK(pao::parse_json(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}]})", "t", {.unique_keys = true})
            .size() == 3);
}

TEST_CASE("shortened_message: a message that quoted a whole long value prints short") {
  const std::string value(100000, 'A');
  const std::string message = "--set num_sms=" + value + ": not a number";
  const std::string shown = pao::shortened_message(message);
  CHECK(shown.size() < 300);
  CHECK(shown.find("(100009 characters)") != std::string::npos);  // "num_sms=AAA...A:", one word
  CHECK(shown.find("--set num_sms=AAA") == 0);
  CHECK(shown.find(" not a number") != std::string::npos);
  // Short messages, and long ones of ordinary words, are printed as they are.
  CHECK(pao::shortened_message("out: 3 elements differ") == "out: 3 elements differ");
  std::string words;
  for (int i = 0; i < 300; ++i) words += "word ";
  CHECK(pao::shortened_message(words) == words);
}

TEST_CASE("excerpt: short text whole, long text cut with its length, UTF-8 kept whole") {
  CHECK(pao::excerpt("abc") == "abc");
  CHECK(pao::excerpt(std::string(200, 'x')) == std::string(200, 'x'));
  const std::string cut = pao::excerpt(std::string(100000, '['));
  CHECK(cut.size() <= pao::kExcerptChars);
  CHECK(cut.rfind("[[[[[", 0) == 0);
  CHECK(cut.ends_with("... (100000 characters)"));
  std::string utf8;
  for (int i = 0; i < 200; ++i) utf8 += "\xc3\xa9";  // é, 2 bytes
  const std::string u = pao::excerpt(utf8);
  const std::string head = u.substr(0, u.find("..."));
  CHECK(head.size() % 2 == 0);

  nlohmann::json scales = nlohmann::json::array();
  for (int i = 0; i < 2000000; ++i) scales.push_back(1.5);
  const std::string j = pao::json_excerpt(scales);
  CHECK(j.size() <= pao::kExcerptChars);
  CHECK(j.rfind("[1.5,1.5,", 0) == 0);
  CHECK(pao::json_excerpt(nlohmann::ordered_json{{"a", 1}}) == R"({"a":1})");
}

TEST_CASE("read_text_file: the limit while reading, a missing file named") {
  pao::test::TempDir dir("pao_test_json_read");
  write_text(dir.path() / "a.json", std::string(100, ' '));
  CHECK(pao::read_text_file(dir.path() / "a.json", "a").size() == 100);
  CHECK(error_of([&] {
          pao::read_text_file(dir.path() / "a.json", "case a.json", 99);
        }).find("case a.json: more than the limit of 99 bytes") != std::string::npos);
  CHECK(error_of([&] {
          pao::read_text_file(dir.path() / "none.json", "case none.json");
        }).find("case none.json: cannot open the file") != std::string::npos);
}

TEST_CASE("every reader of input refuses deep nesting, and quotes a long value in a short message") {
  // Each row: a reader of one kind of input, fed a value 100000 deep or 2M entries long.
  struct Row {
    const char* reader;
    std::function<void()> read;
    const char* says;
  };
  const std::string deep = nested(100000);
  std::string long_list = "[";
  for (int i = 0; i < 2000000; ++i) long_list += i ? ",1.5" : "1.5";
  long_list += "]";
  const std::string long_string = "\"" + std::string(1000000, 'x') + "\"";
  pao::test::TempDir dir("pao_test_json_read");
  write_text(dir.path() / "manifest.json", R"({"format": "pao-golden-manifest", "cases": )" + deep + "}");

  const std::vector<Row> rows = {
      {"case id", [&] { pao::cases::parse_case("{" + std::string(kCase) + R"(, "id": )" + deep + "}", "c"); },
       "nests deeper"},
      {"case kv_quant",
       [&] {
         pao::cases::parse_case(
             "{" + std::string(kCase) + R"(, "kv_cache_dtype": "u8", "kv_quant": {"key": )" + deep + "}}",
             "c");
       },
       "nests deeper"},
      {"case k_head_scales",
       [&] {
         pao::cases::parse_case(
             "{" + std::string(kCase) + R"(, "kv_cache_dtype": "fp8", "k_head_scales": )" + long_list + "}",
             "c");
       },
       "k_head_scales"},
      {"case id string",
       [&] {
         pao::cases::parse_case(
             "{" + std::string(kCase) + R"(, "id": "a/)" + std::string(1000000, 'x') + "\"}", "c");
       },
       "characters)"},
      {"case unknown field",
       [&] { pao::cases::parse_case("{" + std::string(kCase) + ", " + long_string + ": 1}", "c"); },
       "unknown field"},
      {"case dtype",
       [&] {
         pao::cases::parse_case(
             R"({"num_heads": 4, "head_size": 32, "seq_lens": [4], "dtype": )" + long_string + "}", "c");
       },
       "characters)"},
      {"suite grid",
       [&] {
         pao::cases::expand_suite_text(R"({"grids": [{"name": "g", "fixed": {)" + std::string(kCase) +
                                           R"(}, "axes": {"block_size": )" + deep + "}}]}",
                                       "s", false);
       },
       "nests deeper"},
      {"suite case",
       [&] {
         pao::cases::expand_suite_text(R"({"grids": [{"name": "g", "fixed": {)" + std::string(kCase) +
                                           R"(, "k_scale": )" + long_list + "}}]}",
                                       "s", false);
       },
       "k_scale"},
      {"device", [&] { pao::sim::parse_device(R"({"name": "d", "fields": )" + deep + "}", "dev.json"); },
       "nests deeper"},
      {"device key", [&] { pao::sim::parse_device("{" + long_string + ": 1}", "dev.json"); },
       "unknown top-level key"},
      {"safetensors header",
       [&] { pao::read_safetensors_from_memory(safetensors_with_header(deep), "bad.safetensors"); },
       "nests deeper"},
      {"golden manifest", [&] { pao::golden::read_manifest(dir.path() / "manifest.json"); }, "nests deeper"},
      {"measurements CSV",
       [&] {
         pao::sim::parse_measurements("kernel,num_seqs,num_heads,head_size,seq_len,time_us\nv1,1,4,32," +
                                          std::string(1000000, '7') + "x,1\n",
                                      "m.csv");
       },
       "seq_len"},
      {"measurements CSV kernel",
       [&] {
         pao::sim::parse_measurements("kernel,num_seqs,num_heads,head_size,seq_len,time_us\n" +
                                          std::string(1000000, 'v') + ",1,4,32,64,1\n",
                                      "m.csv");
       },
       "kernel"},
  };
  for (const auto& row : rows) {
    INFO(row.reader);
    const std::string m = error_of(row.read);
    INFO(pao::excerpt(m, 2000));
    CHECK(m.find(row.says) != std::string::npos);
    CHECK(m.size() < kShortMessage);
  }
}

TEST_CASE("merging shard manifests of a million shards names the missing ones in a short message") {
  pao::test::TempDir dir("pao_test_json_read");
  for (std::int32_t i = 0; i < 5; ++i) {
    pao::golden::Manifest m;
    m.suite = "s";
    m.shard = pao::cases::Shard{i, 1000000};
    pao::golden::write_manifest(dir.path() / pao::golden::manifest_file_name(m.shard), m);
  }
  const std::string m = error_of([&] { pao::golden::merge_shard_manifests(dir.path()); });
  CHECK(m.find("merge: shards 5, 6, 7") != std::string::npos);
  CHECK(m.find("of 1000000 have no manifest") != std::string::npos);
  CHECK(m.find("999995 missing") != std::string::npos);
  CHECK(m.size() < kShortMessage);
}

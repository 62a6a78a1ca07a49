// Tests of pao/io/safetensors.hpp: a hand-built file checked byte for byte against the format,
// the official writer's tensor order, round trips of every dtype (memory and files, strided
// views, scalars, empty tensors), and one test per malformed-input rule, each asserting that the
// error names the file, the tensor and the rule.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/io/sha256.hpp"

namespace fs = std::filesystem;
using pao::DType;

namespace {

constexpr DType kAllDTypes[] = {DType::f64,      DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3,
                                DType::fp8_e5m2, DType::i32, DType::i64, DType::u8};

std::vector<std::byte> bytes_of(std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

/// A file with `header` as its JSON (unpadded unless the caller pads) and `data` after it.
std::vector<std::byte> make_file(std::string_view header, std::size_t data_bytes = 0) {
  std::vector<std::byte> file(8);
  for (int i = 0; i < 8; ++i) file[i] = std::byte((std::uint64_t(header.size()) >> (8 * i)) & 0xFF);
  const auto h = bytes_of(header);
  file.insert(file.end(), h.begin(), h.end());
  for (std::size_t i = 0; i < data_bytes; ++i) file.push_back(std::byte(i * 7 + 1));
  return file;
}

/// A tensor whose bytes follow a pattern (every bit pattern is a valid element for I/O).
pao::Tensor patterned(DType dtype, pao::Shape shape, int seed) {
  pao::Tensor t(dtype, std::move(shape));
  for (std::size_t i = 0; i < t.nbytes(); ++i) t.bytes()[i] = std::byte((i * 37 + seed * 11 + 5) & 0xFF);
  return t;
}

bool same_bytes(const pao::Tensor& a, const pao::TensorView& b_contiguous) {
  return a.nbytes() == b_contiguous.numel() * pao::dtype_size(b_contiguous.dtype) &&
         std::memcmp(a.bytes(), b_contiguous.data, a.nbytes()) == 0;
}

/// Reading `file` must fail with a pao::Error whose message holds every one of `parts`.
void expect_rejected(const std::vector<std::byte>& file, std::initializer_list<std::string_view> parts) {
  try {
    pao::read_safetensors_from_memory(file, "bad.safetensors");
    FAIL("accepted a malformed file");
  } catch (const pao::Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.rfind("bad.safetensors: ", 0) == 0);
    for (auto part : parts) CHECK(message.find(part) != std::string::npos);
  }
}

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("pao_test_st_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

TEST_CASE("safetensors: a hand-built file, byte for byte") {
  // 8-byte LE header length (144 = 0x90), the JSON padded with spaces to a multiple of 8, then
  // a: F32 [1, 2] and b: I32 [1, -1], packed little-endian.
  const std::string header =
      R"({"__metadata__":{"case":"smoke-1"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I32","shape":[2],"data_offsets":[8,16]}})"
      "  ";
  REQUIRE(header.size() == 144);
  std::vector<std::byte> file = bytes_of(std::string("\x90\0\0\0\0\0\0\0", 8) + header);
  for (unsigned v : {0x00u, 0x00u, 0x80u, 0x3Fu, 0x00u, 0x00u, 0x00u, 0x40u, 0x01u, 0x00u, 0x00u, 0x00u,
                     0xFFu, 0xFFu, 0xFFu, 0xFFu})
    file.push_back(std::byte(v));

  const auto parsed = pao::read_safetensors_from_memory(file, "hand.safetensors");
  CHECK(parsed.metadata == pao::SafetensorsMetadata{{"case", "smoke-1"}});
  REQUIRE(parsed.tensors.size() == 2);
  CHECK(parsed.tensors[0].first == "a");
  CHECK(parsed.tensors[1].first == "b");
  const pao::Tensor* a = parsed.find("a");
  const pao::Tensor* b = parsed.find("b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(parsed.find("c") == nullptr);
  CHECK(a->dtype() == DType::f32);
  CHECK(a->shape() == pao::Shape{2});
  CHECK(a->data<float>()[0] == 1.0f);
  CHECK(a->data<float>()[1] == 2.0f);
  CHECK(b->dtype() == DType::i32);
  CHECK(b->data<std::int32_t>()[0] == 1);
  CHECK(b->data<std::int32_t>()[1] == -1);

  // The writer produces exactly these bytes (the same as the official writer).
  const auto encoded = pao::encode_safetensors({{"b", *b}, {"a", *a}}, parsed.metadata);
  CHECK(encoded == file);
}

TEST_CASE("safetensors: tensors are ordered as the official writer orders them") {
  // Descending position in the official Dtype enum (I64 F64 F32 I32 BF16 F16 F8_E4M3 F8_E5M2
  // U8), then by name.
  std::vector<pao::Tensor> keep;
  pao::NamedTensorViews views;
  const char* names[] = {"u8", "e5m2", "e4m3", "f16", "bf16", "i32", "f32", "f64", "i64"};
  const DType types[] = {DType::u8,  DType::fp8_e5m2, DType::fp8_e4m3, DType::f16, DType::bf16,
                         DType::i32, DType::f32,      DType::f64,      DType::i64};
  for (int i = 0; i < 9; ++i) keep.push_back(patterned(types[i], {3}, i));
  keep.push_back(patterned(DType::f32, {1}, 9));
  for (int i = 0; i < 9; ++i) views.emplace_back(names[i], keep[i]);
  views.emplace_back("a_f32", keep[9]);
  const auto parsed = pao::read_safetensors_from_memory(pao::encode_safetensors(views), "order");
  std::vector<std::string> order;
  for (const auto& [name, t] : parsed.tensors) order.push_back(name);
  CHECK(order ==
        std::vector<std::string>{"i64", "f64", "a_f32", "f32", "i32", "bf16", "f16", "e4m3", "e5m2", "u8"});
}

TEST_CASE("safetensors: round trip of every dtype, in memory and through a file") {
  std::vector<pao::Tensor> tensors;
  pao::NamedTensorViews views;
  int seed = 0;
  for (DType t : kAllDTypes) {
    tensors.push_back(patterned(t, {2, 3, 5}, seed++));
    tensors.push_back(patterned(t, {}, seed++));      // a scalar
    tensors.push_back(patterned(t, {0, 4}, seed++));  // no elements
  }
  for (std::size_t i = 0; i < tensors.size(); ++i)
    views.emplace_back(std::string(pao::dtype_name(tensors[i].dtype())) + "." + std::to_string(i),
                       tensors[i]);
  const pao::SafetensorsMetadata metadata{
      {"kernel", "decode"}, {"seed", "7"}, {"note", "quote \" \\ \n \xC3\xA9"}};

  TempDir dir;
  const auto path = dir.path() / "all.safetensors";
  const auto written = pao::write_safetensors(path, views, metadata);
  CHECK(written.sha256 == pao::sha256_file_hex(path));
  CHECK(written.size == fs::file_size(path));
  const auto encoded = pao::encode_safetensors(views, metadata);
  CHECK(written.sha256 == pao::sha256_hex(encoded));

  for (const auto& parsed :
       {pao::read_safetensors(path), pao::read_safetensors_from_memory(encoded, "mem")}) {
    CHECK(parsed.metadata == metadata);
    REQUIRE(parsed.tensors.size() == views.size());
    for (const auto& named : views) {
      const std::string& name = named.first;  // not a structured binding: INFO captures it
      const pao::TensorView& view = named.second;
      INFO(name);
      const pao::Tensor* t = parsed.find(name);
      REQUIRE(t != nullptr);
      CHECK(t->dtype() == view.dtype);
      CHECK(t->shape() == view.shape);
      CHECK(same_bytes(*t, view));
    }
  }
  // The header alone, with absolute offsets.
  const auto header = pao::read_safetensors_header(path);
  CHECK(header.data_start % 8 == 0);
  CHECK(header.entries.size() == views.size());
  CHECK(header.entries.back().end == fs::file_size(path));
  REQUIRE(header.find("f32.3") != nullptr);
  const auto f32 = pao::read_safetensors_tensor(pao::FileSource(path), *header.find("f32.3"));
  CHECK(same_bytes(f32, tensors[3]));
}

TEST_CASE("safetensors: strided views are written in row-major order") {
  const pao::Tensor base = patterned(DType::f32, {3, 4}, 1);
  // The transpose [4, 3] and every other column [3, 2].
  const pao::TensorView transposed(base.bytes(), DType::f32, {4, 3}, {1, 4});
  const pao::TensorView columns(base.bytes(), DType::f32, {3, 2}, {4, 2});
  const auto parsed = pao::read_safetensors_from_memory(
      pao::encode_safetensors({{"t", transposed}, {"c", columns}}), "strided");
  const float* src = base.data<float>();
  const pao::Tensor* t = parsed.find("t");
  const pao::Tensor* c = parsed.find("c");
  REQUIRE(t != nullptr);
  REQUIRE(c != nullptr);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(std::memcmp(&t->data<float>()[i * 3 + j], &src[j * 4 + i], 4) == 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) CHECK(std::memcmp(&c->data<float>()[i * 2 + j], &src[i * 4 + 2 * j], 4) == 0);
}

TEST_CASE("safetensors: the writer rejects bad names, metadata and views, and leaves no file") {
  const pao::Tensor t = patterned(DType::f32, {2}, 0);
  auto rejects = [&](const pao::NamedTensorViews& views, const pao::SafetensorsMetadata& metadata,
                     std::string_view rule) {
    TempDir dir;
    const auto path = dir.path() / "x.safetensors";
    try {
      pao::write_safetensors(path, views, metadata);
      FAIL("accepted");
    } catch (const pao::Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(rule) != std::string::npos);
      CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    }
    CHECK(fs::is_empty(dir.path()));
  };
  rejects({{"a", t}, {"a", t}}, {}, "duplicate tensor name 'a'");
  rejects({{"", t}}, {}, "empty name");
  rejects({{"__metadata__", t}}, {}, "reserved");
  rejects({{"bad\xFF", t}}, {}, "not valid UTF-8");
  rejects({{"a", t}}, {{"k", "\xC0\x80"}}, "not valid UTF-8");
  rejects({{"a", pao::TensorView(nullptr, DType::f32, {2})}}, {}, "no data");
  pao::TensorView mismatched = t;
  mismatched.strides = {1, 1};  // the fields are public: a view can be assembled wrongly
  rejects({{"a", mismatched}}, {}, "strides");
}

TEST_CASE("safetensors: reader rejects truncated files and bad header lengths") {
  expect_rejected(bytes_of("1234567"), {"truncated", "shorter than the 8-byte header length"});
  expect_rejected({}, {"truncated"});
  auto beyond = make_file("{}");
  beyond[0] = std::byte(200);
  expect_rejected(beyond, {"header length 200", "beyond the end of the file"});
  auto absurd = make_file("{}");
  const std::uint64_t huge = 100'000'001;
  for (int i = 0; i < 8; ++i) absurd[i] = std::byte((huge >> (8 * i)) & 0xFF);
  expect_rejected(absurd, {"header length 100000001", "over the limit of 100000000"});
  for (int i = 0; i < 8; ++i) absurd[i] = std::byte(0xFF);
  expect_rejected(absurd, {"over the limit"});
}

TEST_CASE("safetensors: reader rejects headers that are not UTF-8 JSON objects") {
  expect_rejected(make_file("{\"a\xFF\":1}"), {"not valid UTF-8", "header offset 3"});
  expect_rejected(make_file("{\"\xED\xA0\x80\":1}"), {"not valid UTF-8"});  // a surrogate
  expect_rejected(make_file(R"({"a":{"dtype":"F32")"), {"invalid JSON"});
  expect_rejected(make_file(""), {"invalid JSON"});
  expect_rejected(make_file("{} x"), {"invalid JSON"});
  expect_rejected(make_file("[1, 2]"), {"not a JSON object"});
  expect_rejected(make_file("\"text\""), {"not a JSON object"});
  expect_rejected(make_file(std::string(20, '[') + std::string(20, ']')), {"nests deeper than"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[[[[[[[[1]]]]]]]],"data_offsets":[0,4]}})"),
                  {"nests deeper than"});
}

TEST_CASE("safetensors: reader rejects bad tensor entries, naming the tensor") {
  // A dtype pao does not read is read as a header entry (a vendor's extra tensor is ignored by name);
  // reading the tensor is refused, naming it.
  expect_rejected(make_file(R"({"t":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", 1),
                  {"tensor 't'", "unknown dtype", "BOOL"});
  const auto bool_file = make_file(R"({"t":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", 1);
  CHECK(pao::read_safetensors_header(pao::MemorySource(bool_file, "ok.safetensors"))
            .entries.at(0)
            .foreign_dtype == "BOOL");
  expect_rejected(make_file(R"({"t":{"dtype":"I16","shape":[3],"data_offsets":[0,4]}})", 4),
                  {"tensor 't'", "shape [3] of I16 needs 6 bytes"});
  expect_rejected(make_file(R"({"t":{"dtype":"","shape":[1],"data_offsets":[0,1]}})", 1),
                  {"tensor 't'", "is not a dtype name"});
  expect_rejected(make_file(R"({"t":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", 1),
                  {"tensor 't'", "dtype is not a string"});
  expect_rejected(make_file(R"({"t":[1]})"), {"tensor 't'", "not an object"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1]}})"),
                  {"tensor 't'", "missing field 'data_offsets'"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", 4),
                  {"tensor 't'", "unknown field 'extra'"});
  expect_rejected(make_file(R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4), {"empty name"});
}

TEST_CASE("safetensors: reader rejects bad shapes and size overflow") {
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
                  {"tensor 't'", "shape[0] = -1 is negative"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
                  {"tensor 't'", "shape[0]", "not a non-negative integer"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1e40],"data_offsets":[0,4]}})", 4),
                  {"tensor 't'", "not a non-negative integer"});
  expect_rejected(
      make_file(R"({"t":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4]}})", 4),
      {"tensor 't'", "shape[0] = 18446744073709551615 is too large"});
  expect_rejected(
      make_file(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
      {"tensor 't'", "overflows the size computation"});
  // No elements, yet the strides would overflow: still rejected.
  expect_rejected(
      make_file(R"({"t":{"dtype":"F64","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})"),
      {"tensor 't'", "overflows the size computation"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":{},"data_offsets":[0,4]}})", 4),
                  {"shape is not an array"});
  std::string deep_rank = R"({"t":{"dtype":"U8","shape":[)";
  for (int i = 0; i < 65; ++i) deep_rank += i ? ",1" : "1";
  expect_rejected(make_file(deep_rank + R"(],"data_offsets":[0,1]}})", 1), {"rank 65"});
}

TEST_CASE("safetensors: reader rejects bad data_offsets") {
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4),
                  {"tensor 't'", "data_offsets is not [begin, end]"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":"0-4"}})", 4),
                  {"not [begin, end]"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4),
                  {"begin = -4 is negative"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4),
                  {"tensor 't'", "begin > end"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
                  {"tensor 't'", "beyond the end of the file", "holds 4 bytes"});
  expect_rejected(make_file(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
                  {"tensor 't'", "hold 4 bytes", "needs 8", "size != numel * dtype size"});
}

TEST_CASE("safetensors: reader rejects overlapping and gapped data, and duplicate names") {
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            12),
                  {"tensor 'b'", "overlap tensor 'a'"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                            12),
                  {"tensor 'b'", "gap", "[4, 8)"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
                  {"tensor 'a'", "gap", "[0, 4)"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 6),
                  {"gap", "[4, 6)", "end of the file"});
  expect_rejected(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                            8),
                  {"duplicate key 'a'"});
  // Empty tensors may share an offset.
  const auto ok = make_file(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("c":{"dtype":"F32","shape":[0,2],"data_offsets":[4,4]}})",
                            4);
  CHECK(pao::read_safetensors_from_memory(ok, "ok").tensors.size() == 3);
}

TEST_CASE("safetensors: reader rejects bad __metadata__") {
  expect_rejected(make_file(R"({"__metadata__":{"k":1}})"), {"__metadata__ value of 'k' is not a string"});
  expect_rejected(make_file(R"({"__metadata__":{"k":{"x":"y"}}})"),
                  {"__metadata__ value of 'k' is not a string"});
  expect_rejected(make_file(R"({"__metadata__":["k"]})"), {"__metadata__ is not an object"});
  expect_rejected(make_file(R"({"__metadata__":{"k":"a","k":"b"}})"), {"duplicate key 'k'"});
  const auto only_metadata =
      pao::read_safetensors_from_memory(make_file(R"({"__metadata__":{"k":"v"}})"), "m");
  CHECK(only_metadata.tensors.empty());
  CHECK(only_metadata.metadata.at("k") == "v");
}

TEST_CASE("safetensors: files that cannot be read are pao::Error naming the path") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(pao::read_safetensors(dir.path() / "missing.safetensors"),
                       doctest::Contains("missing.safetensors: cannot open"), pao::Error);
  CHECK_THROWS_WITH_AS(pao::read_safetensors(dir.path()), doctest::Contains("not a regular file"),
                       pao::Error);
}

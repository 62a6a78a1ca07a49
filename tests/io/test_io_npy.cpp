// Tests of pao/io/npy.hpp: numpy's exact header bytes, round trips of every dtype (bf16 and fp8
// as flagged raw bits read back through the declared dtype), headers of versions 2.0 and 3.0 and
// in other spellings, and one test per malformed-input rule.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/npy.hpp"
#include "pao/io/sha256.hpp"

namespace fs = std::filesystem;
using pao::DType;

namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

/// A version `major`.0 file with header text `dict` (not padded) and `data_bytes` of data.
std::vector<std::byte> make_npy(std::string_view dict, std::size_t data_bytes, int major = 1) {
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  const std::size_t n = dict.size();
  file += static_cast<char>(n & 0xFF);
  file += static_cast<char>((n >> 8) & 0xFF);
  if (major != 1) {
    file += static_cast<char>((n >> 16) & 0xFF);
    file += static_cast<char>((n >> 24) & 0xFF);
  }
  file += dict;
  for (std::size_t i = 0; i < data_bytes; ++i) file += static_cast<char>(i * 3 + 1);
  return bytes_of(file);
}

pao::Tensor patterned(DType dtype, pao::Shape shape, int seed) {
  pao::Tensor t(dtype, std::move(shape));
  for (std::size_t i = 0; i < t.nbytes(); ++i) t.bytes()[i] = std::byte((i * 29 + seed * 13 + 3) & 0xFF);
  return t;
}

void expect_rejected(const std::vector<std::byte>& file, std::initializer_list<std::string_view> parts,
                     std::optional<DType> declared = std::nullopt) {
  try {
    pao::read_npy_from_memory(file, "bad.npy", declared);
    FAIL("accepted a malformed file");
  } catch (const pao::Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.rfind("bad.npy: ", 0) == 0);
    for (auto part : parts) CHECK(message.find(part) != std::string::npos);
  }
}

std::string dict_for(std::string_view descr, std::string_view shape, std::string_view fortran = "False") {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(fortran) +
         ", 'shape': " + std::string(shape) + ", }";
}

}  // namespace

TEST_CASE("npy: header bytes equal numpy.save's") {
  // numpy.save(np.zeros((2, 3), np.float32)): the dict, 58 spaces (growth room and 64-byte
  // alignment), a newline; header length 118 (0x76), data at byte 128.
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                               std::string(58, ' ') + "\n";
  const pao::Tensor t = patterned(DType::f32, {2, 3}, 0);
  const auto encoded = pao::encode_npy(t);
  REQUIRE(encoded.size() == 128 + 24);
  CHECK(std::string(reinterpret_cast<const char*>(encoded.data()), 128) == expected);
  CHECK(std::memcmp(encoded.data() + 128, t.bytes(), 24) == 0);

  // Scalars (shape ()) get no growth room, one-element tuples keep their comma.
  auto header_of = [](const pao::Tensor& x) {
    const auto e = pao::encode_npy(x);
    return std::string(reinterpret_cast<const char*>(e.data()) + 10, 118);
  };
  CHECK(header_of(patterned(DType::f64, {}, 0)) ==
        "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" + std::string(62, ' ') + "\n");
  CHECK(header_of(patterned(DType::u8, {5}, 0)) ==
        "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }" + std::string(60, ' ') + "\n");
}

TEST_CASE("npy: encodings; bf16 and fp8 are flagged raw bits") {
  CHECK(pao::npy_encoding(DType::f64).descr == "<f8");
  CHECK(pao::npy_encoding(DType::f32).descr == "<f4");
  CHECK(pao::npy_encoding(DType::f16).descr == "<f2");
  CHECK(pao::npy_encoding(DType::i32).descr == "<i4");
  CHECK(pao::npy_encoding(DType::i64).descr == "<i8");
  CHECK(pao::npy_encoding(DType::u8).descr == "|u1");
  CHECK(pao::npy_encoding(DType::bf16).descr == "<u2");
  CHECK(pao::npy_encoding(DType::fp8_e4m3).descr == "|u1");
  CHECK(pao::npy_encoding(DType::fp8_e5m2).descr == "|u1");
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::i32, DType::i64, DType::u8})
    CHECK_FALSE(pao::npy_encoding(t).raw_bits);
  for (DType t : {DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) CHECK(pao::npy_encoding(t).raw_bits);
}

TEST_CASE("npy: round trip of every dtype, in memory and through a file") {
  const auto dir = fs::temp_directory_path() / ("pao_test_npy_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  int seed = 0;
  for (DType dtype : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2,
                      DType::i32, DType::i64, DType::u8}) {
    const bool raw = dtype == DType::bf16 || pao::is_fp8(dtype);
    const std::optional<DType> declared = raw ? std::optional(dtype) : std::nullopt;
    for (const pao::Shape& shape : {pao::Shape{3, 1, 4}, pao::Shape{}, pao::Shape{7}, pao::Shape{2, 0}}) {
      INFO(pao::dtype_name(dtype), " ", pao::shape_to_string(shape));
      const pao::Tensor t = patterned(dtype, shape, seed++);
      const auto encoded = pao::encode_npy(t);
      const pao::Tensor back = pao::read_npy_from_memory(encoded, "mem", declared);
      CHECK(back.dtype() == dtype);
      CHECK(back.shape() == shape);
      CHECK(std::memcmp(back.bytes(), t.bytes(), t.nbytes()) == 0);
      // A declared dtype equal to the stored one is accepted too.
      CHECK(pao::read_npy_from_memory(encoded, "mem", dtype).dtype() == dtype);
    }
    // Through a file: the same bytes, and the raw-bits flag.
    const pao::Tensor t = patterned(dtype, {2, 5}, seed++);
    const auto path = dir / "t.npy";
    const auto written = pao::write_npy(path, t);
    CHECK(written.encoding.raw_bits == raw);
    CHECK(written.file.sha256 == pao::sha256_file_hex(path));
    CHECK(written.file.sha256 == pao::sha256_hex(pao::encode_npy(t)));
    const pao::Tensor back = pao::read_npy(path, declared);
    CHECK(back.dtype() == dtype);
    CHECK(std::memcmp(back.bytes(), t.bytes(), t.nbytes()) == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("npy: strided views are written in C order") {
  const pao::Tensor base = patterned(DType::i32, {2, 3}, 0);
  const pao::TensorView transposed(base.bytes(), DType::i32, {3, 2}, {1, 3});
  const pao::Tensor back = pao::read_npy_from_memory(pao::encode_npy(transposed), "t");
  CHECK(back.shape() == pao::Shape{3, 2});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      CHECK(back.data<std::int32_t>()[i * 2 + j] == base.data<std::int32_t>()[j * 3 + i]);
}

TEST_CASE("npy: other header spellings and versions 2.0 and 3.0") {
  auto read_shape = [](const std::vector<std::byte>& file) {
    return pao::read_npy_from_memory(file, "ok.npy").shape();
  };
  CHECK(read_shape(make_npy("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}", 24)) ==
        pao::Shape{2, 3});
  CHECK(read_shape(make_npy("{'descr':'<f4','fortran_order':False,'shape':(2,3)}\n", 24)) ==
        pao::Shape{2, 3});
  CHECK(read_shape(make_npy(dict_for("<f4", "( 2 , 3 , )") + "   \n", 24)) == pao::Shape{2, 3});
  CHECK(read_shape(make_npy(dict_for("<i8", "()"), 8, 2)) == pao::Shape{});
  CHECK(read_shape(make_npy(dict_for("<f2", "(4,)"), 8, 3)) == pao::Shape{4});
  CHECK(read_shape(make_npy(dict_for(">u1", "(3,)"), 3)) ==
        pao::Shape{3});  // byte order is moot for one byte
}

TEST_CASE("npy: rejects truncated files and bad prefixes") {
  expect_rejected(bytes_of("\x93NUMPY"), {"truncated", "too short"});
  expect_rejected(bytes_of(std::string_view("\x93NUMPX\x01\x00\x00\x00", 10)),
                  {"not an .npy file", "bad magic"});
  auto v4 = make_npy(dict_for("<f4", "(1,)"), 4);
  v4[6] = std::byte(4);
  expect_rejected(v4, {"unsupported .npy format version 4.0"});
  v4[6] = std::byte(1);
  v4[7] = std::byte(1);
  expect_rejected(v4, {"unsupported .npy format version 1.1"});
  auto beyond = make_npy(dict_for("<f4", "(1,)"), 0);
  beyond[9] = std::byte(0x10);
  expect_rejected(beyond, {"beyond the end of the file"});
  auto absurd = make_npy(dict_for("<f4", "(1,)"), 4, 2);
  absurd[11] = std::byte(0x7F);
  expect_rejected(absurd, {"over the limit"});
  expect_rejected(make_npy(dict_for("<f4", "(2, 3)"), 20), {"truncated", "needs 24 bytes", "holds 20"});
  expect_rejected(make_npy(dict_for("<f4", "(2, 3)"), 25), {"1 trailing bytes"});
}

TEST_CASE("npy: rejects unsupported layouts and dtypes") {
  expect_rejected(make_npy(dict_for("<f4", "(2, 3)", "True"), 24), {"fortran_order True is not supported"});
  expect_rejected(make_npy(dict_for(">f4", "(2,)"), 8), {"'>f4' is big-endian"});
  expect_rejected(make_npy(dict_for("=f4", "(2,)"), 8), {"byte order '='"});
  expect_rejected(make_npy(dict_for("<c8", "(2,)"), 16), {"unsupported descr '<c8'"});
  expect_rejected(make_npy(dict_for("<f4x", "(2,)"), 8), {"unsupported descr"});
  expect_rejected(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8),
                  {"structured dtypes are not supported"});
  expect_rejected(make_npy(dict_for("<u2", "(2,)"), 4), {"raw 16-bit", "declared dtype"});
}

TEST_CASE("npy: the declared dtype must fit the stored bits") {
  const auto bf16_bits = make_npy(dict_for("<u2", "(2,)"), 4);
  CHECK(pao::read_npy_from_memory(bf16_bits, "ok", DType::bf16).dtype() == DType::bf16);
  const auto fp8_bits = make_npy(dict_for("|u1", "(2,)"), 2);
  CHECK(pao::read_npy_from_memory(fp8_bits, "ok", DType::fp8_e5m2).dtype() == DType::fp8_e5m2);
  CHECK(pao::read_npy_from_memory(fp8_bits, "ok").dtype() == DType::u8);
  expect_rejected(make_npy(dict_for("<f4", "(2,)"), 8), {"declared dtype bf16 needs raw '<u2'"}, DType::bf16);
  expect_rejected(make_npy(dict_for("<u2", "(2,)"), 4), {"declared dtype fp8_e4m3 needs raw '|u1'"},
                  DType::fp8_e4m3);
  expect_rejected(make_npy(dict_for("<f8", "(2,)"), 16), {"declared dtype f32 does not match"}, DType::f32);
}

TEST_CASE("npy: rejects header garbage") {
  expect_rejected(make_npy("", 0), {"expected '{'"});
  expect_rejected(make_npy("not a dict", 0), {"expected '{'"});
  expect_rejected(make_npy("{'descr': '<f4', 'fortran_order': False}", 0), {"missing the key 'shape'"});
  expect_rejected(make_npy(dict_for("<f4", "(1,)") + "{", 4), {"unexpected bytes after '}'"});
  expect_rejected(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", 4),
                  {"unexpected key 'extra'"});
  expect_rejected(make_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4),
                  {"duplicate key 'descr'"});
  expect_rejected(make_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4), {"not True or False"});
  expect_rejected(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4),
                  {"shape is not a tuple"});
  expect_rejected(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", 4),
                  {"shape is not a tuple"});
  expect_rejected(make_npy(dict_for("<f4", "(-1,)"), 4), {"shape[0] is negative"});
  expect_rejected(make_npy(dict_for("<f4", "(1.5,)"), 4), {"expected ',' or ')'"});
  expect_rejected(make_npy(dict_for("<f4", "(a,)"), 4), {"shape[0] is not an integer"});
  expect_rejected(make_npy(dict_for("<f4", "(99999999999999999999,)"), 4), {"shape[0] is too large"});
  expect_rejected(make_npy(dict_for("<f4", "(4294967296, 4294967296)"), 4),
                  {"overflows the size computation"});
  expect_rejected(make_npy("{'descr': '<f4", 0), {"unterminated string"});
  expect_rejected(make_npy("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}", 4),
                  {"escape sequences"});
  std::string rank65 = "(";
  for (int i = 0; i < 65; ++i) rank65 += "1, ";
  expect_rejected(make_npy(dict_for("|u1", rank65 + ")"), 1), {"more than 64 dimensions"});
}

TEST_CASE("npy: the writer rejects views it cannot write, and leaves no file") {
  const auto path = fs::temp_directory_path() / ("pao_test_npy_bad_" + std::to_string(::getpid()) + ".npy");
  CHECK_THROWS_WITH_AS(pao::write_npy(path, pao::TensorView(nullptr, DType::f32, {2})),
                       doctest::Contains("no data"), pao::Error);
  CHECK_FALSE(fs::exists(path));
}

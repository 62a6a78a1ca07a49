// Tests of pao/io/sha256.hpp against the FIPS 180-2 example vectors (appendix B) and for
// independence from how the input is split into update() calls.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pao/core/error.hpp"
#include "pao/io/sha256.hpp"

namespace {

struct Vector {
  const char* name;
  std::string message;
  const char* digest;
};

const Vector kVectors[] = {
    {"B.1 abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"B.2 448-bit", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"896-bit",
     "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrs"
     "tnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    {"B.3 one million a", std::string(1000000, 'a'),
     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

}  // namespace

TEST_CASE("sha256: FIPS 180-2 vectors") {
  for (const auto& v : kVectors) {
    INFO(v.name);
    CHECK(pao::sha256_hex(v.message) == v.digest);
  }
}

TEST_CASE("sha256: any split into update() calls gives the same digest") {
  for (const auto& v : kVectors) {
    if (v.message.size() > 1000) continue;
    for (std::size_t chunk : {1u, 3u, 55u, 56u, 63u, 64u, 65u}) {
      INFO(v.name, " chunk ", chunk);
      pao::Sha256 h;
      for (std::size_t i = 0; i < v.message.size(); i += chunk)
        h.update(std::string_view(v.message).substr(i, chunk));
      CHECK(pao::to_hex(h.digest()) == v.digest);
    }
  }
}

TEST_CASE("sha256: files") {
  const auto path =
      std::filesystem::temp_directory_path() / ("pao_test_sha256_" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    out << "abc";
  }
  CHECK(pao::sha256_file_hex(path) == kVectors[0].digest);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(pao::sha256_file_hex(path), pao::Error);
}

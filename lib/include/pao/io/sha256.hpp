// SHA-256 (FIPS 180-4) of buffers and files: golden manifests record it, resumable runs compare it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace pao {

using Sha256Digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> data);
  void update(std::string_view text) { update(std::as_bytes(std::span(text.data(), text.size()))); }
  /// Pads and finishes; the object must not be updated afterwards.
  Sha256Digest digest();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

/// Lower-case hex, 64 characters.
std::string to_hex(const Sha256Digest& digest);
std::string sha256_hex(std::span<const std::byte> data);
std::string sha256_hex(std::string_view text);
/// Streams the file; throws pao::Error naming the path if it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace pao

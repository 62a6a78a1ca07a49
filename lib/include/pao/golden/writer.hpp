// Writing one golden: a safetensors file `<id>.safetensors`, or (--format npy) a folder `<id>/`
// with one `<tensor>.npy` per tensor and a `meta.json` that declares each tensor's real dtype
// (bf16 and fp8 are stored as raw u16/u8 bits), its shape and sha256, plus the case and the
// metadata. Both are published atomically: a reader sees the complete golden or none.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "pao/golden/tensors.hpp"

namespace pao::golden {

enum class GoldenFormat : std::uint8_t { safetensors, npy };
std::string to_string(GoldenFormat format);
GoldenFormat parse_golden_format(std::string_view text);

struct WrittenGolden {
  std::string file;    // relative to the output folder: "<id>.safetensors" or "<id>"
  std::string sha256;  // of the file; npy: of its meta.json (which holds every .npy's sha256)
  std::uint64_t bytes = 0;
};

std::string golden_file_name(const std::string& id, GoldenFormat format);

WrittenGolden write_golden(const GoldenTensors& golden, const std::filesystem::path& dir,
                           GoldenFormat format);

}  // namespace pao::golden

// safetensors files (the golden-file format): an 8-byte little-endian header length N, N bytes
// of JSON (padded with spaces to a multiple of 8), then the tensors' packed little-endian data.
// The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the start of the data) and may hold "__metadata__", a string -> string map.
//
// The writer produces the bytes the official writer produces: compact JSON, "__metadata__" first
// (keys sorted), tensors ordered by descending dtype (in the official Dtype enum order) and then
// by name, data packed in that order. The readers check every rule of the format and throw
// pao::Error naming the file, the tensor and the rule; sizes are checked against the file size
// before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/byte_source.hpp"

namespace pao {

/// Headers longer than this are rejected, as the official reader does.
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;
/// Tensors of higher rank are rejected (real files stay far below).
inline constexpr std::size_t kSafetensorsMaxRank = 64;

using NamedTensorViews = std::vector<std::pair<std::string, TensorView>>;
using SafetensorsMetadata = std::map<std::string, std::string>;

/// One tensor of a safetensors header. Offsets are absolute file offsets of its data.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::f32;
  /// A dtype of the format pao has no DType for ("I16", "BOOL", ...), else empty: the header is
  /// valid and the tensor can be listed or ignored; reading it throws, naming the dtype.
  std::string foreign_dtype;
  Shape shape;
  std::uint64_t begin = 0;  // read headers: offsets in the file (data_offsets + data_start)
  std::uint64_t end = 0;
};

/// A validated header: every entry's dtype, shape and size agree, and the entries cover the data
/// region exactly and contiguously.
struct SafetensorsHeader {
  SafetensorsMetadata metadata;
  std::vector<SafetensorsEntry> entries;  // in data order
  std::uint64_t data_start = 0;           // 8 + N
  const SafetensorsEntry* find(std::string_view name) const;
};

struct SafetensorsFile {
  SafetensorsMetadata metadata;
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file (data) order
  /// The tensor called `name`, or nullptr.
  const Tensor* find(std::string_view name) const;
};

/// The complete file contents for `tensors` and `metadata`. Throws pao::Error on an empty or
/// duplicate name, the reserved name "__metadata__", names or metadata that are not UTF-8, a
/// dtype without a safetensors name, or a view without data.
std::vector<std::byte> encode_safetensors(const NamedTensorViews& tensors,
                                          const SafetensorsMetadata& metadata = {});

/// Writes `encode_safetensors(tensors, metadata)` atomically; invalid input leaves no file.
WrittenFile write_safetensors(const std::filesystem::path& path, const NamedTensorViews& tensors,
                              const SafetensorsMetadata& metadata = {});

/// Reads and validates the header only (cheap for large files).
SafetensorsHeader read_safetensors_header(const ByteSource& source);
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);

/// Reads the data of one entry of a header read from the same source.
Tensor read_safetensors_tensor(const ByteSource& source, const SafetensorsEntry& entry);

SafetensorsFile read_safetensors(const std::filesystem::path& path);
SafetensorsFile read_safetensors_from_memory(std::span<const std::byte> bytes,
                                             std::string_view name_for_errors);

}  // namespace pao

// safetensors reader: validates the header completely (UTF-8, JSON, entries, sizes, coverage of
// the data region) before allocating any tensor, then reads each tensor into its own buffer.
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "pao/core/error.hpp"
#include "pao/io/checked_size.hpp"
#include "pao/io/json_read.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/io/utf8.hpp"

namespace pao {
namespace {

using Json = nlohmann::json;

// A safetensors header nests three levels (root, entry, shape); anything deeper is malformed.
// Duplicate names are refused (nlohmann would silently keep the last).
constexpr JsonLimits kHeaderJsonLimits{
    .max_bytes = kSafetensorsMaxHeaderBytes, .max_depth = 8, .unique_keys = true};

SafetensorsMetadata parse_metadata(const Json& json, const std::string& file) {
  require(json.is_object(), file, ": __metadata__ is not an object of strings");
  SafetensorsMetadata metadata;
  for (const auto& [key, value] : json.items()) {
    require(value.is_string(), file, ": __metadata__ value of '", excerpt(key), "' is not a string (",
            value.type_name(), ")");
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

/// A non-negative integer that fits in int64, or an error naming `what`.
std::uint64_t parse_count(const Json& value, const std::string& prefix, const std::string& what) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    require(v <= std::uint64_t(std::numeric_limits<std::int64_t>::max()), prefix, what, " = ", v,
            " is too large");
    return v;
  }
  if (value.is_number_integer()) fail(prefix, what, " = ", value.get<std::int64_t>(), " is negative");
  fail(prefix, what, " = ", json_excerpt(value), " is not a non-negative integer");
}

/// Bits per element of the format's dtypes pao has no DType for (safetensors' Dtype enum), 0 for
/// a name the format does not define (its size is then unknown and not checked).
std::uint64_t foreign_dtype_bits(std::string_view name) {
  constexpr std::pair<std::string_view, std::uint64_t> kBits[] = {
      {"BOOL", 8}, {"I16", 16}, {"U16", 16},    {"U32", 32},    {"U64", 64},        {"F8_E8M0", 8},
      {"C64", 64}, {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}};
  for (const auto& [n, bits] : kBits)
    if (n == name) return bits;
  return 0;
}

/// numel * bits / 8 rounded up, or nullopt on overflow.
std::optional<std::uint64_t> foreign_tensor_bytes(const Shape& shape, std::uint64_t bits) {
  std::uint64_t numel = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && numel > std::numeric_limits<std::uint64_t>::max() / 64 / static_cast<std::uint64_t>(d))
      return std::nullopt;
    numel *= static_cast<std::uint64_t>(d);
  }
  return (numel * bits + 7) / 8;
}

SafetensorsEntry parse_entry(const std::string& name, const Json& json, std::uint64_t data_size,
                             const std::string& file) {
  const std::string prefix = file + ": tensor '" + excerpt(name) + "': ";
  require(!name.empty(), file, ": a tensor has an empty name");
  require(json.is_object(), prefix, "entry is not an object with dtype, shape and data_offsets");
  for (const auto& [key, value] : json.items())
    require(key == "dtype" || key == "shape" || key == "data_offsets", prefix, "unknown field '",
            excerpt(key), "' (expected dtype, shape, data_offsets)");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    require(json.contains(key), prefix, "missing field '", key, "'");

  SafetensorsEntry entry;
  entry.name = name;
  const Json& dtype = json["dtype"];
  require(dtype.is_string(), prefix, "dtype is not a string");
  try {
    entry.dtype = parse_safetensors_dtype(dtype.get<std::string>());
  } catch (const Error&) {
    // A dtype pao does not read is no reason to refuse the file: a vendor's extra tensor (an I16
    // index, a BOOL mask) is listed and ignored; only reading it fails (read_safetensors_tensor).
    entry.foreign_dtype = dtype.get<std::string>();
    require(!entry.foreign_dtype.empty() && entry.foreign_dtype.size() <= 32, prefix, "dtype '",
            entry.foreign_dtype.substr(0, 32), "' is not a dtype name");
  }

  const Json& shape = json["shape"];
  require(shape.is_array(), prefix, "shape is not an array");
  require(shape.size() <= kSafetensorsMaxRank, prefix, "shape has rank ", shape.size(), ", more than ",
          kSafetensorsMaxRank);
  for (std::size_t i = 0; i < shape.size(); ++i)
    entry.shape.push_back(
        static_cast<std::int64_t>(parse_count(shape[i], prefix, "shape[" + std::to_string(i) + "]")));
  const std::string dtype_text =
      entry.foreign_dtype.empty() ? std::string(safetensors_dtype_name(entry.dtype)) : entry.foreign_dtype;
  const std::uint64_t foreign_bits = foreign_dtype_bits(entry.foreign_dtype);
  const auto bytes = entry.foreign_dtype.empty() ? checked_tensor_bytes(entry.shape, entry.dtype)
                                                 : foreign_tensor_bytes(entry.shape, foreign_bits);
  require(bytes.has_value(), prefix, "shape ", shape_to_string(entry.shape), " of ", dtype_text,
          " overflows the size computation");

  const Json& offsets = json["data_offsets"];
  require(offsets.is_array() && offsets.size() == 2, prefix,
          "data_offsets is not [begin, end]: ", json_excerpt(offsets));
  entry.begin = parse_count(offsets[0], prefix, "data_offsets begin");
  entry.end = parse_count(offsets[1], prefix, "data_offsets end");
  require(entry.begin <= entry.end, prefix, "data_offsets [", entry.begin, ", ", entry.end,
          "] have begin > end");
  require(entry.end <= data_size, prefix, "data_offsets [", entry.begin, ", ", entry.end,
          "] run beyond the end of the file (the data region holds ", data_size, " bytes)");
  // A name the format does not define has no known size: its offsets are taken as they are.
  const bool size_known = entry.foreign_dtype.empty() || foreign_bits != 0;
  require(!size_known || entry.end - entry.begin == *bytes, prefix, "data_offsets [", entry.begin, ", ",
          entry.end, "] hold ", entry.end - entry.begin, " bytes but shape ", shape_to_string(entry.shape),
          " of ", dtype_text, " needs ", *bytes, " bytes (size != numel * dtype size)");
  return entry;
}

/// The entries, sorted by offset, must tile [0, data_size) exactly: no overlap, no gap.
void check_coverage(std::vector<SafetensorsEntry>& entries, std::uint64_t data_size,
                    const std::string& file) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t cursor = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const auto& e : entries) {
    if (e.begin < cursor)
      fail(file, ": tensor '", excerpt(e.name), "': data_offsets [", e.begin, ", ", e.end,
           "] overlap tensor '", excerpt(previous->name), "' [", previous->begin, ", ", previous->end, "]");
    if (e.begin > cursor)
      fail(file, ": tensor '", excerpt(e.name), "': data_offsets [", e.begin, ", ", e.end,
           "] leave a gap: data bytes [", cursor, ", ", e.begin, ") belong to no tensor");
    cursor = e.end;
    previous = &e;
  }
  require(cursor == data_size, file, ": gap: data bytes [", cursor, ", ", data_size,
          ") at the end of the file belong to no tensor");
}

}  // namespace

const SafetensorsEntry* SafetensorsHeader::find(std::string_view name) const {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

const Tensor* SafetensorsFile::find(std::string_view name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

SafetensorsHeader read_safetensors_header(const ByteSource& source) {
  const std::string& file = source.name();
  const std::uint64_t size = source.size();
  require(size >= 8, file, ": truncated: the file is ", size,
          " bytes, shorter than the 8-byte header length");
  std::uint8_t length_bytes[8];
  source.read(0, length_bytes, 8);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(length_bytes[i]) << (8 * i);
  require(n <= kSafetensorsMaxHeaderBytes, file, ": header length ", n, " is over the limit of ",
          kSafetensorsMaxHeaderBytes, " bytes");
  require(n <= size - 8, file, ": header length ", n, " runs beyond the end of the file (", size, " bytes)");

  std::string text(static_cast<std::size_t>(n), '\0');
  source.read(8, text.data(), text.size());
  if (auto bad = find_invalid_utf8(text))
    fail(file, ": header is not valid UTF-8 (invalid byte at header offset ", *bad, ")");
  const Json json = parse_json(text, file + ": header", kHeaderJsonLimits);
  require(json.is_object(), file, ": header is not a JSON object (", json.type_name(), ")");

  SafetensorsHeader header;
  header.data_start = 8 + n;
  const std::uint64_t data_size = size - header.data_start;
  for (const auto& [key, value] : json.items()) {
    if (key == "__metadata__")
      header.metadata = parse_metadata(value, file);
    else
      header.entries.push_back(parse_entry(key, value, data_size, file));
  }
  check_coverage(header.entries, data_size, file);
  for (auto& e : header.entries) {
    e.begin += header.data_start;
    e.end += header.data_start;
  }
  return header;
}

SafetensorsHeader read_safetensors_header(const std::filesystem::path& path) {
  return read_safetensors_header(FileSource(path));
}

Tensor read_safetensors_tensor(const ByteSource& source, const SafetensorsEntry& entry) {
  if (!entry.foreign_dtype.empty()) {
    try {
      parse_safetensors_dtype(entry.foreign_dtype);
    } catch (const Error& e) {
      fail(source.name(), ": tensor '", excerpt(entry.name), "': unknown dtype: ", e.what());
    }
  }
  const auto bytes = checked_tensor_bytes(entry.shape, entry.dtype);
  require(bytes.has_value() && entry.begin <= entry.end && *bytes == entry.end - entry.begin, source.name(),
          ": tensor '", entry.name, "': the entry's offsets do not match its shape ",
          shape_to_string(entry.shape));
  Tensor tensor(entry.dtype, entry.shape);
  source.read(entry.begin, tensor.bytes(), tensor.nbytes());
  return tensor;
}

namespace {
SafetensorsFile read_all(const ByteSource& source) {
  SafetensorsHeader header = read_safetensors_header(source);
  SafetensorsFile file;
  file.metadata = std::move(header.metadata);
  file.tensors.reserve(header.entries.size());
  for (const auto& e : header.entries) file.tensors.emplace_back(e.name, read_safetensors_tensor(source, e));
  return file;
}
}  // namespace

SafetensorsFile read_safetensors(const std::filesystem::path& path) { return read_all(FileSource(path)); }

SafetensorsFile read_safetensors_from_memory(std::span<const std::byte> bytes,
                                             std::string_view name_for_errors) {
  return read_all(MemorySource(bytes, name_for_errors));
}

}  // namespace pao

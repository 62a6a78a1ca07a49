// NumPy .npy files (format 1.0 written; 1.0, 2.0 and 3.0 read), for users who load goldens with
// numpy alone. Stored dtypes: '<f8' '<f4' '<f2' '<i4' '<i8' '|u1'. numpy has no bf16 or fp8, so
// those are written as their raw bits ('<u2' for bf16, '|u1' for fp8) and the writer says so; the
// caller records the real dtype (e.g. in a meta.json) and passes it back to the reader as the
// declared dtype. The writer's bytes equal numpy.save's for the same array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/byte_source.hpp"

namespace pao {

/// Headers longer than this are rejected (numpy writes ~128 bytes for any tensor of ours).
inline constexpr std::uint64_t kNpyMaxHeaderBytes = 1 << 20;
inline constexpr std::size_t kNpyMaxRank = 64;

/// How a dtype is stored in .npy: its descr, and whether the elements are raw bits of a type
/// numpy does not have (bf16, fp8).
struct NpyEncoding {
  std::string_view descr;
  bool raw_bits = false;
};
NpyEncoding npy_encoding(DType dtype);

struct NpyWritten {
  NpyEncoding encoding;
  WrittenFile file;
};

/// The complete .npy file for `tensor` (any strides; written in C order).
std::vector<std::byte> encode_npy(const TensorView& tensor);
/// Writes encode_npy(tensor) atomically. `result.encoding.raw_bits` says the bits are raw.
NpyWritten write_npy(const std::filesystem::path& path, const TensorView& tensor);

/// Reads an .npy file. Without `declared`, the dtype follows the descr ('<u2' is refused: it
/// needs declared = bf16). With `declared`: bf16 reinterprets '<u2', fp8_e4m3/fp8_e5m2
/// reinterpret '|u1', and any other declared dtype must match the descr. Throws pao::Error naming
/// the file and the rule for malformed headers, fortran_order True, big-endian or unsupported
/// descrs, truncated or oversized data.
Tensor read_npy(const ByteSource& source, std::optional<DType> declared = std::nullopt);
Tensor read_npy(const std::filesystem::path& path, std::optional<DType> declared = std::nullopt);
Tensor read_npy_from_memory(std::span<const std::byte> bytes, std::string_view name_for_errors,
                            std::optional<DType> declared = std::nullopt);

}  // namespace pao

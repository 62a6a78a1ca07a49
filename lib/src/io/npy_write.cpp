// .npy writer: format 1.0 with numpy's exact header layout (sorted keys, growth padding, 64-byte
// alignment), so the bytes equal numpy.save's.
#include <array>
#include <string>

#include "pao/core/error.hpp"
#include "pao/io/checked_size.hpp"
#include "pao/io/npy.hpp"

namespace pao {
namespace {

constexpr std::size_t kArrayAlign = 64;           // numpy's ARRAY_ALIGN
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

/// Python's repr of the shape tuple: (), (5,), (2, 3).
std::string shape_repr(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ',';
  return s + ")";
}

std::string npy_header(const TensorView& tensor) {
  std::string dict = "{'descr': '" + std::string(npy_encoding(tensor.dtype).descr) +
                     "', 'fortran_order': False, 'shape': " + shape_repr(tensor.shape) + ", }";
  // numpy leaves room for the first axis to grow in place.
  if (!tensor.shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(tensor.shape[0]).size(), ' ');
  // magic (6) + version (2) + u16 length (2) + dict + padding + '\n' is a multiple of 64; numpy
  // pads a full 64 when the rest is already aligned.
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append(kArrayAlign - unpadded % kArrayAlign, ' ');
  dict += '\n';
  require(dict.size() <= 0xFFFF, "npy: header of ", dict.size(), " bytes does not fit format 1.0");
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xFF);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

void check_writable(const TensorView& tensor) {
  require(tensor.shape.size() <= kNpyMaxRank, "npy: rank ", tensor.shape.size(), " is more than ",
          kNpyMaxRank);
  require(checked_tensor_bytes(tensor.shape, tensor.dtype).has_value(), "npy: shape ",
          shape_to_string(tensor.shape), " has a negative or too large dimension");
  require(tensor.strides.size() == tensor.shape.size(), "npy: shape ", shape_to_string(tensor.shape),
          " and strides ", shape_to_string(tensor.strides), " differ in rank");
  require(tensor.numel() == 0 || tensor.data != nullptr, "npy: tensor has no data");
}

}  // namespace

NpyEncoding npy_encoding(DType dtype) {
  // From the dtype table: numpy's own dtype ("<f2", "<i8", "|u1") where numpy has it, else the
  // raw bits as an unsigned integer of the same size (bf16 "<u2", fp8 "|u1").
  static const auto descrs = [] {
    std::array<std::string, kDTypes.size()> out;
    for (const DTypeInfo& d : kDTypes)
      out[static_cast<std::size_t>(d.type)] =
          std::string(d.bytes == 1 ? "|" : "<") + (d.numpy_native ? d.kind : 'u') + std::to_string(d.bytes);
    return out;
  }();
  return {descrs[static_cast<std::size_t>(dtype)], !dtype_info(dtype).numpy_native};
}

std::vector<std::byte> encode_npy(const TensorView& tensor) {
  check_writable(tensor);
  VectorSink sink;
  sink.write(npy_header(tensor));
  write_tensor_data(sink, tensor, "npy");
  return std::move(sink.bytes());
}

NpyWritten write_npy(const std::filesystem::path& path, const TensorView& tensor) {
  std::string header;
  try {
    check_writable(tensor);
    header = npy_header(tensor);
  } catch (const Error& e) {
    fail(path.string(), ": ", e.what());  // nothing was created
  }
  NpyWritten result;
  result.encoding = npy_encoding(tensor.dtype);
  result.file = write_file_atomically(path, [&](ByteSink& sink) {
    sink.write(header);
    write_tensor_data(sink, tensor, path.string());
  });
  return result;
}

}  // namespace pao

// ByteSink: where file writers stream their bytes (a file being written atomically, or memory),
// and write_tensor_data, which streams any strided TensorView in row-major order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "pao/core/tensor.hpp"

namespace pao {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(std::span<const std::byte> bytes) = 0;
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
};

/// Collects everything in memory (encode_* functions, tests, fuzz round trips).
class VectorSink final : public ByteSink {
 public:
  using ByteSink::write;
  void write(std::span<const std::byte> bytes) override {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  std::vector<std::byte>& bytes() { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

/// Bytes of the elements of `view` in row-major order: numel * dtype_size.
std::uint64_t tensor_data_bytes(const TensorView& view);

/// Streams the elements of `view` in row-major order (contiguous runs in one write).
/// `what` names the tensor in errors (null data with elements, rank/strides mismatch).
void write_tensor_data(ByteSink& sink, const TensorView& view, std::string_view what);

}  // namespace pao

// Streaming strided tensors into a ByteSink in row-major order.
#include "pao/io/byte_sink.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "pao/core/error.hpp"

namespace pao {

std::uint64_t tensor_data_bytes(const TensorView& view) {
  return static_cast<std::uint64_t>(view.numel()) * dtype_size(view.dtype);
}

void write_tensor_data(ByteSink& sink, const TensorView& view, std::string_view what) {
  require(view.strides.size() == view.shape.size(), what, ": shape ", shape_to_string(view.shape),
          " and strides ", shape_to_string(view.strides), " differ in rank");
  for (auto d : view.shape)
    require(d >= 0, what, ": negative dimension in shape ", shape_to_string(view.shape));
  const std::int64_t numel = view.numel();
  if (numel == 0) return;
  require(view.data != nullptr, what, ": no data for shape ", shape_to_string(view.shape));
  const std::size_t es = dtype_size(view.dtype);
  if (view.is_contiguous()) {
    sink.write(std::span(view.bytes(), static_cast<std::size_t>(numel) * es));
    return;
  }
  // Strided: walk the index space; runs along a unit-stride last dimension go out in one write,
  // anything else is gathered element by element through a staging buffer.
  const int rank = view.rank();
  const std::int64_t inner = view.shape.back();
  const bool inner_contiguous = view.strides.back() == 1;
  std::array<std::byte, 1 << 14> staging;
  std::size_t staged = 0;
  auto flush = [&] {
    sink.write(std::span(staging.data(), staged));
    staged = 0;
  };
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  for (std::int64_t row = 0; row < numel / inner; ++row) {
    std::int64_t base = 0;
    for (int d = 0; d < rank - 1; ++d) base += index[d] * view.strides[d];
    const std::byte* row_start = view.bytes() + base * static_cast<std::int64_t>(es);
    if (inner_contiguous) {
      if (staged > 0) flush();
      sink.write(std::span(row_start, static_cast<std::size_t>(inner) * es));
    } else {
      for (std::int64_t i = 0; i < inner; ++i) {
        if (staged + es > staging.size()) flush();
        std::memcpy(staging.data() + staged,
                    row_start + i * view.strides.back() * static_cast<std::int64_t>(es), es);
        staged += es;
      }
    }
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[d] < view.shape[d]) break;
      index[d] = 0;
    }
  }
  if (staged > 0) flush();
}

}  // namespace pao

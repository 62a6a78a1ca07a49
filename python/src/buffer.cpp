// Buffers over Python arrays (buffer.hpp).
#include "buffer.hpp"

#include <cstring>
#include <vector>

#include "pao/core/error.hpp"

namespace pao::python {

namespace nb = nanobind;

Buffer::Buffer(nb::ndarray<nb::ro, nb::device::cpu> array, const std::string& dtype, const std::string& name)
    : array_(std::move(array)), name_(name) {
  const DType t = parse_dtype(dtype, name + ": dtype");
  require(array_.itemsize() == dtype_size(t), name, ": elements of ", array_.itemsize(),
          " bytes cannot hold ", dtype_name(t), " (", dtype_size(t), " bytes)");
  Shape shape(array_.ndim()), strides(array_.ndim());
  for (std::size_t d = 0; d < array_.ndim(); ++d) {
    shape[d] = static_cast<std::int64_t>(array_.shape(d));
    strides[d] = static_cast<std::int64_t>(array_.stride(d));
  }
  view_ = TensorView(array_.data(), t, std::move(shape), std::move(strides));
}

void Buffer::assign(const Tensor& t) const {
  require(t.dtype() == view_.dtype, name_, ": dtype ", dtype_name(view_.dtype), ", the kernel writes ",
          dtype_name(t.dtype()));
  require(t.shape() == view_.shape, name_, ": shape ", shape_to_string(view_.shape), ", the kernel writes ",
          shape_to_string(t.shape()));
  const std::size_t es = dtype_size(t.dtype());
  const auto* src = t.bytes();
  auto* dst = static_cast<std::byte*>(const_cast<void*>(view_.data));  // an output: the caller's memory
  if (view_.is_contiguous()) {
    std::memcpy(dst, src, t.nbytes());
    return;
  }
  const std::size_t rank = view_.shape.size();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * view_.strides[d];
    std::memcpy(dst + offset * static_cast<std::int64_t>(es), src + i * static_cast<std::int64_t>(es), es);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < view_.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace pao::python

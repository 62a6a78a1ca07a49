// Owned tensors and strided views.
#include "pao/core/tensor.hpp"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <cstring>
#include <new>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao {

std::string shape_to_string(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

Shape index_of_flat(const Shape& shape, std::int64_t flat) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return index;
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

TensorView::TensorView(const void* data_, DType dtype_, Shape shape_)
    : data(data_), dtype(dtype_), shape(std::move(shape_)), strides(contiguous_strides(shape)) {}

TensorView::TensorView(const void* data_, DType dtype_, Shape shape_, Shape strides_)
    : data(data_), dtype(dtype_), shape(std::move(shape_)), strides(std::move(strides_)) {
  require(shape.size() == strides.size(), "TensorView: shape ", shape_to_string(shape), " and strides ",
          shape_to_string(strides), " differ in rank");
}

bool TensorView::is_contiguous() const { return strides == contiguous_strides(shape); }

std::int64_t TensorView::offset(std::initializer_list<std::int64_t> index) const {
  std::int64_t off = 0;
  std::size_t d = 0;
  for (auto i : index) off += i * strides[d++];
  return off;
}

double TensorView::at(std::initializer_list<std::int64_t> index) const {
  return decode_element(dtype, bytes() + offset(index) * static_cast<std::int64_t>(dtype_size(dtype)));
}

std::int32_t TensorView::i32_at(std::initializer_list<std::int64_t> index) const {
  std::int32_t v;
  std::memcpy(&v, bytes() + offset(index) * 4, 4);
  return v;
}

namespace {

// Large tensors (KV caches of long contexts) are read block by block at scattered addresses: on 4 KiB
// pages nearly every block costs a TLB miss. They are aligned to 2 MiB and offered to the kernel as
// transparent huge pages.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t alignment_for(std::size_t bytes) { return bytes >= 4 * kHugePage ? kHugePage : 64; }

}  // namespace

void Tensor::FreeAligned::operator()(std::byte* p) const { std::free(p); }

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (auto d : shape_) require(d >= 0, "Tensor: negative dimension in shape ", shape_to_string(shape_));
  // Allocate at least one byte so that an empty tensor is still `defined()`.
  const std::size_t n = nbytes() > 0 ? nbytes() : 1;
  const std::size_t align = alignment_for(n);
  const std::size_t rounded = round_up(n, align);  // aligned_alloc wants a multiple
  auto* p = static_cast<std::byte*>(std::aligned_alloc(align, rounded));
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  storage_.reset(p);
  std::memset(storage_.get(), 0, n);
}

Tensor Tensor::filled(DType dtype, Shape shape, double value) {
  Tensor t(dtype, std::move(shape));
  if (t.numel() == 0) return t;
  const std::size_t es = dtype_size(dtype);
  encode_element(dtype, value, t.bytes());
  for (std::int64_t i = 1; i < t.numel(); ++i) std::memcpy(t.bytes() + i * es, t.bytes(), es);
  return t;
}

Tensor Tensor::copy_of(const TensorView& view) {
  Tensor t(view.dtype, view.shape);
  const std::size_t es = dtype_size(view.dtype);
  const std::int64_t n = t.numel();
  const int rank = view.rank();
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += idx[d] * view.strides[d];
    std::memcpy(t.bytes() + flat * es, view.bytes() + off * static_cast<std::int64_t>(es), es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < view.shape[d]) break;
      idx[d] = 0;
    }
  }
  return t;
}

void Tensor::set(std::initializer_list<std::int64_t> index, double value) {
  encode_element(dtype_, value,
                 bytes() + view().offset(index) * static_cast<std::int64_t>(dtype_size(dtype_)));
}

std::vector<double> Tensor::to_f64() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  const std::size_t es = dtype_size(dtype_);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode_element(dtype_, bytes() + i * es);
  return out;
}

}  // namespace pao

// Tensors: `Tensor` owns a contiguous, 64-byte aligned buffer; `TensorView` is a strided,
// non-owning window onto one (or onto any caller memory). Shapes and strides are in elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "pao/core/dtype.hpp"

namespace pao {

using Shape = std::vector<std::int64_t>;

/// "[2, 8, 128]"
std::string shape_to_string(const Shape& shape);
std::int64_t shape_numel(const Shape& shape);
/// Row-major strides of a contiguous tensor of `shape`.
Shape contiguous_strides(const Shape& shape);
/// The multi-index of row-major element `flat` of a tensor of `shape` (the inverse of the strides).
Shape index_of_flat(const Shape& shape, std::int64_t flat);

/// A strided view. `data` points at element [0, 0, ...]. Views do not own memory; inputs are
/// read through views and never written.
struct TensorView {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Shape strides;  // in elements

  TensorView() = default;
  TensorView(const void* data_, DType dtype_, Shape shape_);  // contiguous
  TensorView(const void* data_, DType dtype_, Shape shape_, Shape strides_);

  bool empty() const { return data == nullptr && shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t size(int dim) const { return shape.at(static_cast<std::size_t>(dim)); }
  std::int64_t numel() const { return shape_numel(shape); }
  bool is_contiguous() const;
  const std::byte* bytes() const { return static_cast<const std::byte*>(data); }

  /// Element offset of a multi-index (no bounds check; callers validate shapes first).
  std::int64_t offset(std::initializer_list<std::int64_t> index) const;
  /// Decodes one element to double (any dtype).
  double at(std::initializer_list<std::int64_t> index) const;
  /// The i32 element at `index` (dtype must be i32).
  std::int32_t i32_at(std::initializer_list<std::int64_t> index) const;
};

/// An owned, contiguous tensor.
class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled
  static Tensor filled(DType dtype, Shape shape, double value);
  /// A contiguous copy of any view.
  static Tensor copy_of(const TensorView& view);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t size(int dim) const { return shape_.at(static_cast<std::size_t>(dim)); }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const { return shape_numel(shape_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  bool defined() const { return static_cast<bool>(storage_); }

  std::byte* bytes() { return storage_.get(); }
  const std::byte* bytes() const { return storage_.get(); }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(storage_.get());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(storage_.get());
  }

  TensorView view() const { return TensorView(storage_.get(), dtype_, shape_); }
  operator TensorView() const { return view(); }  // NOLINT: tensors are read as views everywhere

  double at(std::initializer_list<std::int64_t> index) const { return view().at(index); }
  /// Writes `value` rounded to the tensor's dtype (RNE; fp8 saturates).
  void set(std::initializer_list<std::int64_t> index, double value);
  /// Every element decoded to double, in row-major order.
  std::vector<double> to_f64() const;

 private:
  struct FreeAligned {
    void operator()(std::byte* p) const;
  };
  DType dtype_ = DType::f32;
  Shape shape_;
  std::unique_ptr<std::byte[], FreeAligned> storage_;
};

}  // namespace pao

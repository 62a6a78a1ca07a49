// A tensor handed over from Python: a CPU array (torch through DLPack, numpy through the buffer
// protocol or DLPack) with pao's dtype beside it. bf16 and fp8 arrive as their raw bits (int16 /
// uint8 views made by pao/_tensors.py), so the dtype travels by name. No copy: a Buffer views the
// caller's memory, strides included; outputs are written into it in place.
#pragma once

#include <nanobind/ndarray.h>

#include <string>

#include "pao/core/tensor.hpp"

namespace pao::python {

class Buffer {
 public:
  /// `name` is what errors call the tensor ("key_cache"); `dtype` a pao dtype name ("bf16").
  Buffer(nanobind::ndarray<nanobind::ro, nanobind::device::cpu> array, const std::string& dtype,
         const std::string& name);

  const std::string& name() const { return name_; }
  DType dtype() const { return view_.dtype; }
  const Shape& shape() const { return view_.shape; }
  const TensorView& view() const { return view_; }

  /// Copies `t` into this buffer (an output written in place): same shape and dtype, any strides.
  /// Throws pao::Error naming the tensor otherwise.
  void assign(const Tensor& t) const;

 private:
  nanobind::ndarray<nanobind::ro, nanobind::device::cpu>
      array_;  // keeps the memory alive; outputs are checked writable in pao/_tensors.py
  std::string name_;
  TensorView view_;
};

}  // namespace pao::python

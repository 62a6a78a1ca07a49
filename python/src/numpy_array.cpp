// pao Tensors as numpy arrays that own them (bindings.hpp).
#include <memory>
#include <vector>

#include "bindings.hpp"
#include "pao/core/error.hpp"

namespace pao::python {

namespace nb = nanobind;

namespace {

/// The numpy dtype of a tensor's memory (pao/core/dtype.hpp): its own where numpy has it, else
/// unsigned integers of its width (bf16, fp8 cross as raw bits).
nb::dlpack::dtype raw_dtype(DType t) {
  const DTypeInfo& d = dtype_info(t);
  using Code = nb::dlpack::dtype_code;
  const Code code = !d.numpy_native ? Code::UInt
                    : d.kind == 'f' ? Code::Float
                    : d.kind == 'i' ? Code::Int
                                    : Code::UInt;
  return {static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(8 * d.bytes), 1};
}

}  // namespace

nb::object to_numpy(Tensor&& t) {
  auto owner = std::make_unique<Tensor>(std::move(t));
  std::vector<std::size_t> shape(owner->shape().begin(), owner->shape().end());
  const nb::dlpack::dtype dtype = raw_dtype(owner->dtype());
  void* data = owner->bytes();
  nb::capsule deleter(owner.get(), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  owner.release();  // the capsule owns it now
  nb::ndarray<nb::numpy> array(data, shape.size(), shape.data(), deleter, nullptr, dtype);
  return nb::cast(array);  // a view of the capsule's tensor, not a copy
}

}  // namespace pao::python

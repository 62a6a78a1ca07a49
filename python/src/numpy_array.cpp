// pao Tensors as numpy arrays that own them (bindings.hpp).
#include <memory>
#include <vector>

#include "bindings.hpp"
#include "pao/core/error.hpp"

namespace pao::python {

namespace nb = nanobind;

namespace {

nb::dlpack::dtype raw_dtype(DType t) {
  switch (t) {
    case DType::f64:
      return nb::dtype<double>();
    case DType::f32:
      return nb::dtype<float>();
    case DType::f16:
      return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::bf16:
      return nb::dtype<std::uint16_t>();
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::u8:
      return nb::dtype<std::uint8_t>();
    case DType::i32:
      return nb::dtype<std::int32_t>();
    case DType::i64:
      return nb::dtype<std::int64_t>();
  }
  fail("no numpy dtype for ", dtype_name(t));
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

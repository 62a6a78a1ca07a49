// libFuzzer target for the safetensors reader. Any input must be either accepted or rejected
// with pao::Error: a crash, a sanitizer report, an oversized allocation or any other exception
// is a bug. What is accepted must survive encode_safetensors -> read unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "pao/core/error.hpp"
#include "pao/io/safetensors.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();  // libFuzzer reports the input that got here
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  pao::SafetensorsFile file;
  try {
    file = pao::read_safetensors_from_memory(input, "fuzz-input");
  } catch (const pao::Error&) {
    return 0;
  }

  pao::NamedTensorViews views;
  for (const auto& [name, tensor] : file.tensors) views.emplace_back(name, tensor.view());
  const auto encoded = pao::encode_safetensors(views, file.metadata);  // must not throw
  const auto again = pao::read_safetensors_from_memory(encoded, "fuzz-round-trip");
  check(again.metadata == file.metadata);
  check(again.tensors.size() == file.tensors.size());
  for (const auto& [name, tensor] : file.tensors) {
    const pao::Tensor* other = again.find(name);
    check(other != nullptr);
    check(other->dtype() == tensor.dtype() && other->shape() == tensor.shape());
    check(std::memcmp(other->bytes(), tensor.bytes(), tensor.nbytes()) == 0);
  }
  // The writer's output is canonical: encoding what was read back gives the same bytes.
  pao::NamedTensorViews again_views;
  for (const auto& [name, tensor] : again.tensors) again_views.emplace_back(name, tensor.view());
  check(pao::encode_safetensors(again_views, again.metadata) == encoded);
  return 0;
}

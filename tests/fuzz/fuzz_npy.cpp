// libFuzzer target for the .npy reader, with and without a declared dtype for raw bits. Any
// input must be accepted or rejected with pao::Error; what is accepted must survive
// encode_npy -> read unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>

#include "pao/core/error.hpp"
#include "pao/io/npy.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();  // libFuzzer reports the input that got here
}

void read_and_round_trip(std::span<const std::byte> input, std::optional<pao::DType> declared) {
  pao::Tensor tensor;
  try {
    tensor = pao::read_npy_from_memory(input, "fuzz-input", declared);
  } catch (const pao::Error&) {
    return;
  }
  const auto encoded = pao::encode_npy(tensor);  // must not throw
  const pao::Tensor again = pao::read_npy_from_memory(encoded, "fuzz-round-trip", tensor.dtype());
  check(again.dtype() == tensor.dtype() && again.shape() == tensor.shape());
  check(std::memcmp(again.bytes(), tensor.bytes(), tensor.nbytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  read_and_round_trip(input, std::nullopt);
  read_and_round_trip(input, pao::DType::bf16);
  read_and_round_trip(input, pao::DType::fp8_e4m3);
  return 0;
}

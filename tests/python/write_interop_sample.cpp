// The C++ side of tests/python/test_safetensors_interop.py, independent of the pao CLI:
//   pao_write_interop_sample [--metadata JSON] OUT.safetensors [NPY_DIR]
//       writes a sample of every dtype (and, with NPY_DIR, one .npy per tensor + meta.json); the
//       metadata is a JSON object of strings (default: three keys, one of them non-ASCII)
//   pao_write_interop_sample --read FILE.safetensors     prints metadata and tensors as JSON
//   pao_write_interop_sample --read-npy FILE.npy [DTYPE] prints one .npy tensor as JSON
// Sample values are small integers and powers of two, exact in every format, and are encoded
// here by a formula (not by pao's codecs) so that the Python side checks pao's files against
// values it knows independently. Exit status: 0 ok, 2 bad input (the pao::Error on stderr).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/npy.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/io/sha256.hpp"

namespace {

using pao::DType;

const double kFloats[8] = {0, 1, -2, 0.5, 3, -0.25, 8, 12};
const std::int64_t kI32[8] = {0, 1, -2, 3, -2147483648LL, 2147483647, 100, -100};
const std::int64_t kI64[8] = {0, 1, -2, std::int64_t(1) << 40, -(std::int64_t(1) << 62), INT64_MAX, 7, -7};
const std::int64_t kU8[8] = {0, 1, 2, 3, 127, 128, 254, 255};
const std::int64_t kI8[8] = {0, 1, -2, 3, -128, 127, 100, -100};

/// The bits of v in a binary format with `exp_bits` exponent and `man_bits` mantissa bits, for
/// zero and normal numbers the format holds exactly (all that the sample uses).
std::uint32_t exact_bits(double v, int exp_bits, int man_bits) {
  const std::uint32_t sign = std::signbit(v) ? 1u : 0u;
  if (v == 0) return sign << (exp_bits + man_bits);
  int e = 0;
  const double m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  const int biased = e - 1 + (1 << (exp_bits - 1)) - 1;
  const double fraction = (2 * m - 1) * std::ldexp(1.0, man_bits);
  pao::require(biased >= 1 && biased < (1 << exp_bits) - 1 && fraction == std::floor(fraction),
               "sample value ", v, " is not exact in this format");
  return sign << (exp_bits + man_bits) | std::uint32_t(biased) << man_bits | std::uint32_t(fraction);
}

pao::Tensor sample(DType dtype) {
  pao::Tensor t(dtype, {2, 4});
  for (int i = 0; i < 8; ++i) {
    std::byte* p = t.bytes() + i * pao::dtype_size(dtype);
    auto put = [&](auto value) { std::memcpy(p, &value, sizeof value); };
    switch (dtype) {
      case DType::f64:
        put(kFloats[i]);
        break;
      case DType::f32:
        put(static_cast<float>(kFloats[i]));
        break;
      case DType::f16:
        put(static_cast<std::uint16_t>(exact_bits(kFloats[i], 5, 10)));
        break;
      case DType::bf16:
        put(static_cast<std::uint16_t>(exact_bits(kFloats[i], 8, 7)));
        break;
      case DType::fp8_e4m3:
        put(static_cast<std::uint8_t>(exact_bits(kFloats[i], 4, 3)));
        break;
      case DType::fp8_e5m2:
        put(static_cast<std::uint8_t>(exact_bits(kFloats[i], 5, 2)));
        break;
      case DType::i32:
        put(static_cast<std::int32_t>(kI32[i]));
        break;
      case DType::i64:
        put(kI64[i]);
        break;
      case DType::u8:
        put(static_cast<std::uint8_t>(kU8[i]));
        break;
      case DType::i8:
        put(static_cast<std::int8_t>(kI8[i]));
        break;
    }
  }
  return t;
}

int write_sample(const std::filesystem::path& out, const char* npy_dir,
                 const pao::SafetensorsMetadata& metadata) {
  std::vector<pao::Tensor> tensors;
  pao::NamedTensorViews views;
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2,
                  DType::i32, DType::i64, DType::u8, DType::i8})
    tensors.push_back(sample(t));
  for (const auto& t : tensors) views.emplace_back(std::string(pao::dtype_name(t.dtype())), t.view());
  // The transpose of the f32 sample, written from a strided view: [4, 2].
  const pao::Tensor& f32 = tensors[1];
  views.emplace_back("f32_transposed", pao::TensorView(f32.bytes(), DType::f32, {4, 2}, {1, 4}));
  const pao::Tensor scalar =
      pao::Tensor::copy_of(pao::TensorView(f32.bytes() + 4 * 4, DType::f32, {}));  // 3.0
  views.emplace_back("scalar", scalar.view());
  const pao::Tensor empty(DType::bf16, {0, 3});
  views.emplace_back("empty", empty.view());
  pao::write_safetensors(out, views, metadata);

  if (npy_dir != nullptr) {
    std::filesystem::create_directories(npy_dir);
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [name, view] : views) {
      const auto written = pao::write_npy(std::filesystem::path(npy_dir) / (name + ".npy"), view);
      meta[name] = {{"dtype", std::string(pao::dtype_name(view.dtype))},
                    {"descr", std::string(written.encoding.descr)},
                    {"raw_bits", written.encoding.raw_bits}};
    }
    const std::string text = meta.dump(2) + "\n";
    pao::write_file_atomically(std::filesystem::path(npy_dir) / "meta.json",
                               std::as_bytes(std::span(text.data(), text.size())));
  }
  return 0;
}

nlohmann::json describe(const pao::Tensor& t) {
  return {{"dtype", std::string(pao::safetensors_dtype_name(t.dtype()))},
          {"shape", t.shape()},
          {"sha256", pao::sha256_hex(std::span(t.bytes(), t.nbytes()))}};
}

int read_safetensors(const char* path) {
  const pao::SafetensorsFile file = pao::read_safetensors(path);
  nlohmann::json out = {{"metadata", file.metadata}, {"tensors", nlohmann::json::array()}};
  for (const auto& [name, tensor] : file.tensors) {
    nlohmann::json entry = describe(tensor);
    entry["name"] = name;
    out["tensors"].push_back(entry);
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int read_npy(const char* path, const char* declared) {
  const auto dtype = declared ? std::optional(pao::parse_dtype(declared)) : std::nullopt;
  std::cout << describe(pao::read_npy(std::filesystem::path(path), dtype)).dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: pao_write_interop_sample [--metadata JSON] OUT.safetensors [NPY_DIR]\n"
      "       pao_write_interop_sample --read FILE.safetensors\n"
      "       pao_write_interop_sample --read-npy FILE.npy [DTYPE]\n";
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 2 && args[0] == "--read") return read_safetensors(argv[2]);
    if ((args.size() == 2 || args.size() == 3) && args[0] == "--read-npy")
      return read_npy(argv[2], args.size() == 3 ? argv[3] : nullptr);
    pao::SafetensorsMetadata metadata{
        {"kernel", "decode"}, {"seed", "7"}, {"note", "unicode \xC3\xA9 \xE2\x9C\x93"}};
    if (args.size() >= 2 && args[0] == "--metadata") {
      metadata = nlohmann::json::parse(args[1]).get<pao::SafetensorsMetadata>();
      args.erase(args.begin(), args.begin() + 2);
    }
    if ((args.size() == 1 || args.size() == 2) && !args[0].starts_with("--"))
      return write_sample(args[0], args.size() == 2 ? args[1].c_str() : nullptr, metadata);
    std::cerr << usage;
    return 2;
  } catch (const pao::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "error: --metadata: " << e.what() << "\n";
    return 2;
  }
}

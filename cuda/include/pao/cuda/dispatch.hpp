// The one place where runtime values become template parameters of the CUDA decode kernels:
// head size, block size, activation dtype and KV-cache dtype. Every supported value is listed
// here once; the dispatchers below are generated from these lists, and an unsupported value
// returns a Status naming the parameter, its value and what is supported.
//
// Plain C++ (no CUDA headers): the CPU tests drive the dispatchers with a recording functor.
// A functor is called as `f.template operator()<...>()` and returns a Status, e.g.
//   dispatch_head_and_block(hs, bs, [&]<std::int32_t HS, std::int32_t BS>() { return run<HS, BS>(); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "pao/core/dtype.hpp"
#include "pao/cuda/status.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::cuda {

/// vLLM's head sizes: the one list of pao/plan/launch_shape.hpp.
inline constexpr auto& kHeadSizes = kSupportedHeadSizes;
/// vLLM's CUDA block sizes (the kernel precision needs a power of two >= 8 with a V row in a warp).
inline constexpr std::int32_t kBlockSizes[] = {8, 16, 32};
/// Activation dtypes (query, out, tmp_out).
inline constexpr DType kActivationDTypes[] = {DType::f32, DType::f16, DType::bf16};
/// fp8 cache flavours; the other KV-cache dtype is the activation dtype itself.
inline constexpr DType kFp8CacheDTypes[] = {DType::fp8_e4m3, DType::fp8_e5m2};

namespace dispatch_detail {

template <typename T, std::size_t N>
std::string list(const T (&values)[N]) {
  std::ostringstream os;
  for (std::size_t i = 0; i < N; ++i) {
    if (i) os << ", ";
    if constexpr (std::is_same_v<T, DType>)
      os << dtype_name(values[i]);
    else
      os << values[i];
  }
  return os.str();
}

template <typename T, std::size_t N>
Status unsupported(const char* name, std::int32_t value, const T (&values)[N]) {
  std::ostringstream os;
  os << name << " = " << value << ": not supported by the CUDA kernels (supported: " << list(values) << ")";
  return Status::failure(os.str());
}

/// Calls f.template operator()<Values[I]>() for the I with Values[I] == value; false if none.
template <const auto& Values, typename F, std::size_t... I>
bool call_matching(std::int32_t value, F& f, Status& result, std::index_sequence<I...>) {
  const auto call = [&]<std::size_t K>() {
    if (value != Values[K]) return false;
    result = f.template operator()<Values[K]>();
    return true;
  };
  return (call.template operator()<I>() || ...);
}

template <typename F>
Status head_size(std::int32_t value, F& f) {
  Status result;
  if (!call_matching<kHeadSizes>(value, f, result, std::make_index_sequence<std::size(kHeadSizes)>()))
    return unsupported("head_size", value, kHeadSizes);
  return result;
}

template <typename F>
Status block_size(std::int32_t value, F& f) {
  Status result;
  if (!call_matching<kBlockSizes>(value, f, result, std::make_index_sequence<std::size(kBlockSizes)>()))
    return unsupported("block_size", value, kBlockSizes);
  return result;
}

template <DType Activation, typename F>
Status cache_dtype(DType cache, F& f) {
  if (cache == Activation) return f.template operator()<Activation, Activation>();
  if (cache == DType::fp8_e4m3) return f.template operator()<Activation, DType::fp8_e4m3>();
  if (cache == DType::fp8_e5m2) return f.template operator()<Activation, DType::fp8_e5m2>();
  std::ostringstream os;
  os << "kv_cache_dtype = " << dtype_name(cache) << ": must equal dtype (" << dtype_name(Activation)
     << ") or be one of " << list(kFp8CacheDTypes);
  return Status::failure(os.str());
}

}  // namespace dispatch_detail

/// f.template operator()<HeadSize>() for a supported head size.
template <typename F>
Status dispatch_head_size(std::int32_t head_size, F&& f) {
  return dispatch_detail::head_size(head_size, f);
}

/// f.template operator()<BlockSize>() for a supported block size.
template <typename F>
Status dispatch_block_size(std::int32_t block_size, F&& f) {
  return dispatch_detail::block_size(block_size, f);
}

/// f.template operator()<HeadSize, BlockSize>(). The block size is checked first.
template <typename F>
Status dispatch_head_and_block(std::int32_t head_size, std::int32_t block_size, F&& f) {
  return dispatch_block_size(block_size, [&]<std::int32_t BS>() {
    return dispatch_head_size(head_size, [&]<std::int32_t HS>() { return f.template operator()<HS, BS>(); });
  });
}

/// f.template operator()<Activation, Cache>() for dtype in kActivationDTypes and kv_cache_dtype
/// equal to dtype or an fp8 flavour.
template <typename F>
Status dispatch_dtypes(DType dtype, DType kv_cache_dtype, F&& f) {
  switch (dtype) {
    case DType::f32:
      return dispatch_detail::cache_dtype<DType::f32>(kv_cache_dtype, f);
    case DType::f16:
      return dispatch_detail::cache_dtype<DType::f16>(kv_cache_dtype, f);
    case DType::bf16:
      return dispatch_detail::cache_dtype<DType::bf16>(kv_cache_dtype, f);
    default:
      break;
  }
  return Status::failure(
      std::string("dtype = ") + std::string(dtype_name(dtype)) +
      ": not supported by the CUDA kernels (supported: " + dispatch_detail::list(kActivationDTypes) + ")");
}

/// Whether the reduce kernel is instantiated for this activation dtype.
template <typename F>
Status dispatch_activation(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f.template operator()<DType::f32>();
    case DType::f16:
      return f.template operator()<DType::f16>();
    case DType::bf16:
      return f.template operator()<DType::bf16>();
    default:
      break;
  }
  return Status::failure(
      std::string("dtype = ") + std::string(dtype_name(dtype)) +
      ": not supported by the CUDA kernels (supported: " + dispatch_detail::list(kActivationDTypes) + ")");
}

}  // namespace pao::cuda

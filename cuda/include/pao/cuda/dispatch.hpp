// The one place where runtime values become template parameters of the CUDA decode kernels:
// head size, block size, activation dtype and KV-cache dtype. Every supported value is listed
// here once (the dtypes: the rows of pao/core/dtype.hpp's table); the dispatchers below are
// generated from these lists, and an unsupported value
// returns a Status naming the parameter, its value and what is supported. A slim build
// (pao/cuda/build_config.hpp) lists fewer values: the rest are refused the same way.
//
// Plain C++ (no CUDA headers): the CPU tests drive the dispatchers with a recording functor.
// A functor is called as `f.template operator()<...>()` and returns a Status, e.g.
//   dispatch_head_and_block(hs, bs, [&]<std::int32_t HS, std::int32_t BS>() { return run<HS, BS>(); });
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "pao/core/dtype.hpp"
#include "pao/cuda/build_config.hpp"
#include "pao/cuda/status.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::cuda {

/// An activation dtype and the dtype its KV cache stores (the same, or an fp8 flavour).
struct DTypePair {
  DType activation;
  DType cache;
};

#ifdef PAO_CUDA_SLIM_HEAD_SIZES
inline constexpr std::int32_t kHeadSizes[] = {PAO_CUDA_SLIM_HEAD_SIZES};
#else
/// vLLM's head sizes: the one list of pao/plan/launch_shape.hpp.
inline constexpr auto& kHeadSizes = kSupportedHeadSizes;
#endif
#ifdef PAO_CUDA_SLIM_BLOCK_SIZES
inline constexpr std::int32_t kBlockSizes[] = {PAO_CUDA_SLIM_BLOCK_SIZES};
#else
/// vLLM's CUDA block sizes (the kernel precision needs a power of two >= 8 with a V row in a warp).
inline constexpr std::int32_t kBlockSizes[] = {8, 16, 32};
#endif
/// The dtypes of the table (pao/core/dtype.hpp) whose row `keep` accepts, in table order.
template <bool (*Keep)(DType)>
constexpr auto dtypes_where() {
  constexpr std::size_t n = [] {
    std::size_t k = 0;
    for (const DTypeInfo& d : kDTypes) k += Keep(d.type) ? 1 : 0;
    return k;
  }();
  std::array<DType, n> out{};
  std::size_t k = 0;
  for (const DTypeInfo& d : kDTypes)
    if (Keep(d.type)) out[k++] = d.type;
  return out;
}
/// Activation dtypes (query, out, tmp_out): the table's activation rows.
inline constexpr auto kActivationDTypes = dtypes_where<is_activation>();
/// Quantised cache dtypes (fp8 flavours, integer codes): the table's cache formats; the other
/// KV-cache dtype is the activation dtype itself.
inline constexpr auto kQuantisedCacheDTypes = dtypes_where<is_cache_format>();
/// What a cache of activation dtype A may store: A, or a cache format.
template <DType A>
inline constexpr auto kCacheDTypesOf = [] {
  std::array<DType, 1 + kQuantisedCacheDTypes.size()> out{A};
  for (std::size_t i = 0; i < kQuantisedCacheDTypes.size(); ++i) out[i + 1] = kQuantisedCacheDTypes[i];
  return out;
}();
#ifdef PAO_CUDA_SLIM_DTYPE_PAIRS
inline constexpr DTypePair kDTypePairs[] = {PAO_CUDA_SLIM_DTYPE_PAIRS};
#else
/// Every activation dtype with its own cache and with each cache format (fp8 e4m3 / e5m2; the
/// integer u8, i8: a u4 cache is u8 codes 0..15). cuda/CMakeLists.txt reads the same rows.
inline constexpr auto kDTypePairs = [] {
  std::array<DTypePair, kActivationDTypes.size() * kCacheDTypesOf<DType::f32>.size()> out{};
  std::size_t k = 0;
  for (const DType a : kActivationDTypes) {
    out[k++] = {a, a};
    for (const DType c : kQuantisedCacheDTypes) out[k++] = {a, c};
  }
  return out;
}();
#endif
/// Whether this build holds the kernels of (activation, cache); every pair in a full build.
inline constexpr bool dtype_pair_built(DType activation, DType cache) {
  for (const DTypePair& p : kDTypePairs)
    if (p.activation == activation && p.cache == cache) return true;
  return false;
}
/// Whether this build holds any kernel of the activation dtype (the reduce's instantiations).
inline constexpr bool activation_built(DType activation) {
  for (const DTypePair& p : kDTypePairs)
    if (p.activation == activation) return true;
  return false;
}
/// What a refusal adds in a slim build.
inline constexpr const char* kSlimNote = PAO_CUDA_SLIM ? " in this slim build" : "";

namespace dispatch_detail {

template <typename Values>
std::string list(const Values& values) {
  std::ostringstream os;
  for (std::size_t i = 0; i < std::size(values); ++i) {
    if (i) os << ", ";
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(values[0])>, DType>)
      os << dtype_name(values[i]);
    else
      os << values[i];
  }
  return os.str();
}

template <typename Values>
Status unsupported(const char* name, std::int32_t value, const Values& values) {
  std::ostringstream os;
  os << name << " = " << value << ": not supported by the CUDA kernels" << kSlimNote
     << " (supported: " << list(values) << ")";
  return Status::failure(os.str());
}

/// Calls f.template operator()<Values[I]>() for the I with Values[I] == value; false if none.
template <const auto& Values, typename V, typename F, std::size_t... I>
bool call_matching(V value, F& f, Status& result, std::index_sequence<I...>) {
  const auto call = [&]<std::size_t K>() {
    if (value != Values[K]) return false;
    result = f.template operator()<Values[K]>();
    return true;
  };
  return (call.template operator()<I>() || ...);
}

/// f.template operator()<value>() if `value` is one of Values, else the refusal naming `name`.
template <const auto& Values, typename F>
Status listed_value(const char* name, std::int32_t value, F& f) {
  Status result;
  if (!call_matching<Values>(value, f, result, std::make_index_sequence<std::size(Values)>()))
    return unsupported(name, value, Values);
  return result;
}

inline std::string pair_list() {
  std::ostringstream os;
  for (std::size_t i = 0; i < std::size(kDTypePairs); ++i)
    os << (i ? ", " : "") << dtype_name(kDTypePairs[i].activation) << ":" << dtype_name(kDTypePairs[i].cache);
  return os.str();
}

/// f.template operator()<Activation, Cache>() if this build holds the pair.
template <DType Activation, DType Cache, typename F>
Status call_pair(F& f) {
  if constexpr (dtype_pair_built(Activation, Cache)) {
    return f.template operator()<Activation, Cache>();
  } else {
    return Status::failure(std::string("dtype = ") + std::string(dtype_name(Activation)) +
                           ", kv_cache_dtype = " + std::string(dtype_name(Cache)) +
                           ": not in this slim build of the CUDA kernels (it holds " + pair_list() + ")");
  }
}

template <DType Activation, typename F>
Status cache_dtype(DType cache, F& f) {
  Status result;
  auto pair = [&]<DType Cache>() { return call_pair<Activation, Cache>(f); };
  if (call_matching<kCacheDTypesOf<Activation>>(
          cache, pair, result, std::make_index_sequence<kCacheDTypesOf<Activation>.size()>()))
    return result;
  std::ostringstream os;
  os << "kv_cache_dtype = " << dtype_name(cache) << ": must equal dtype (" << dtype_name(Activation)
     << ") or be one of " << list(kQuantisedCacheDTypes);
  return Status::failure(os.str());
}

/// g.template operator()<Activation>() for dtype in kActivationDTypes, else the refusal.
template <typename G>
Status activation_dtype(DType dtype, G& g) {
  Status result;
  if (call_matching<kActivationDTypes>(dtype, g, result,
                                       std::make_index_sequence<kActivationDTypes.size()>()))
    return result;
  return Status::failure(std::string("dtype = ") + std::string(dtype_name(dtype)) +
                         ": not supported by the CUDA kernels (supported: " + list(kActivationDTypes) + ")");
}

/// f.template operator()<Activation>() if this build holds kernels of the activation dtype.
template <DType Activation, typename F>
Status call_activation(F& f) {
  if constexpr (activation_built(Activation)) {
    return f.template operator()<Activation>();
  } else {
    return Status::failure(std::string("dtype = ") + std::string(dtype_name(Activation)) +
                           ": not in this slim build of the CUDA kernels (it holds " + pair_list() + ")");
  }
}

}  // namespace dispatch_detail

/// f.template operator()<HeadSize>() for a supported head size.
template <typename F>
Status dispatch_head_size(std::int32_t head_size, F&& f) {
  return dispatch_detail::listed_value<kHeadSizes>("head_size", head_size, f);
}

/// f.template operator()<BlockSize>() for a supported block size.
template <typename F>
Status dispatch_block_size(std::int32_t block_size, F&& f) {
  return dispatch_detail::listed_value<kBlockSizes>("block_size", block_size, f);
}

/// f.template operator()<HeadSize, BlockSize>(). The block size is checked first.
template <typename F>
Status dispatch_head_and_block(std::int32_t head_size, std::int32_t block_size, F&& f) {
  return dispatch_block_size(block_size, [&]<std::int32_t BS>() {
    return dispatch_head_size(head_size, [&]<std::int32_t HS>() { return f.template operator()<HS, BS>(); });
  });
}

/// f.template operator()<Activation, Cache>() for dtype in kActivationDTypes and kv_cache_dtype
/// equal to dtype or a cache format.
template <typename F>
Status dispatch_dtypes(DType dtype, DType kv_cache_dtype, F&& f) {
  auto caches = [&]<DType Activation>() {
    return dispatch_detail::cache_dtype<Activation>(kv_cache_dtype, f);
  };
  return dispatch_detail::activation_dtype(dtype, caches);
}

/// Whether the reduce kernel is instantiated for this activation dtype.
template <typename F>
Status dispatch_activation(DType dtype, F&& f) {
  auto built = [&]<DType Activation>() { return dispatch_detail::call_activation<Activation>(f); };
  return dispatch_detail::activation_dtype(dtype, built);
}

}  // namespace pao::cuda

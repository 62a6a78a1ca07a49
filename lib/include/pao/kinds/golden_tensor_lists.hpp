// The golden tensors of each kind that its seeded case holds, declared once: a tensor's name in a
// golden file and where the kind's seeded case (cases::DecodeCase, ...) keeps it, in file order.
// One list of inputs drives the kind's table (KindTraits::inputs), its golden builder (the seeded
// tensors moved out under these names) and the golden reader (a golden's tensors moved back in:
// golden::decode_case_of); one list of written caches serves the kinds that write them.
// alibi_slopes and an integer cache's scales and zero points are in every list; a golden holds
// them only where they apply (kinds::golden_tensor_applies).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "pao/cases/case_tensors.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao::kinds {

/// One golden tensor: its name and the tensor of a seeded case `C` it is.
template <typename C>
struct CaseTensor {
  std::string_view name;
  Tensor& (*of)(C&);
};

namespace case_tensor_detail {

template <typename M>
struct member_of;
template <typename C, typename T>
struct member_of<T C::*> {
  using owner = C;
};
template <auto M>
using owner_of = typename member_of<decltype(M)>::owner;

template <auto M>
Tensor& member(owner_of<M>& c) {
  return c.*M;
}
template <auto Outer, auto Inner>
Tensor& nested(owner_of<Outer>& c) {
  return (c.*Outer).*Inner;
}
template <auto Quant, CacheTensor T, bool ZeroPoint>
Tensor& quant_param(owner_of<Quant>& c) {
  return (c.*Quant).param(T, ZeroPoint);
}

}  // namespace case_tensor_detail

/// The tensor `M` (&DecodeCase::query) named `name`.
template <auto M>
constexpr CaseTensor<case_tensor_detail::owner_of<M>> tensor(std::string_view name) {
  return {name, &case_tensor_detail::member<M>};
}
/// The tensor `Inner` of the case's `Outer` (WriteAndAttendCase's step.query).
template <auto Outer, auto Inner>
constexpr CaseTensor<case_tensor_detail::owner_of<Outer>> tensor(std::string_view name) {
  return {name, &case_tensor_detail::nested<Outer, Inner>};
}

/// The golden names of an integer cache's scales and zero points, as the cache write found them.
inline constexpr std::array<std::string_view, 4> kQuantParamsBefore = {
    "key_cache_scale_before", "key_cache_zero_point_before", "value_cache_scale_before",
    "value_cache_zero_point_before"};

/// The four scale and zero-point tensors of the case's QuantParamTensors `Quant`, under
/// quant_param_name's names (with `before`: kQuantParamsBefore's).
template <auto Quant>
constexpr std::array<CaseTensor<case_tensor_detail::owner_of<Quant>>, 4> quant_tensors(bool before = false) {
  using case_tensor_detail::quant_param;
  constexpr CacheTensor K = CacheTensor::key, V = CacheTensor::value;
  const auto name = [&](std::size_t i, CacheTensor t, bool zp) {
    return before ? kQuantParamsBefore[i] : quant_param_name(t, zp);
  };
  return {{{name(0, K, false), &quant_param<Quant, K, false>},
           {name(1, K, true), &quant_param<Quant, K, true>},
           {name(2, V, false), &quant_param<Quant, V, false>},
           {name(3, V, true), &quant_param<Quant, V, true>}}};
}
static_assert(
    [] {
      std::size_t i = 0;
      for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
        for (const bool zp : {false, true}) {
          const std::string_view name = kQuantParamsBefore[i++], param = quant_param_name(t, zp);
          if (name.substr(0, param.size()) != param || name.substr(param.size()) != "_before") return false;
        }
      return true;
    }(),
    "kQuantParamsBefore: quant_param_name's names plus _before, in its order");

/// a then b.
template <typename T, std::size_t N, std::size_t M>
constexpr std::array<T, N + M> concat(const std::array<T, N>& a, const std::array<T, M>& b) {
  std::array<T, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

/// The tensors of `list` read into the seeded case `c`: `input(name)` gives each (an empty tensor
/// for one a golden does not hold: alibi_slopes without ALiBi).
template <typename C, std::size_t N, typename Input>
void read_tensors(C& c, const std::array<CaseTensor<C>, N>& list, Input&& input) {
  for (const CaseTensor<C>& t : list) t.of(c) = input(t.name);
}

/// The names of a list: KindTraits::inputs.
template <typename C, std::size_t N>
constexpr std::array<std::string_view, N> names_of(const std::array<CaseTensor<C>, N>& list) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = list[i].name;
  return out;
}

// ---- the lists ---------------------------------------------------------------------------------

using cases::DecodeCase;
using cases::PrefixCase;
using cases::ReshapeCase;
using cases::WriteAndAttendCase;

/// decode (paged_attention_v1 / v2).
inline constexpr auto kDecodeInputs = concat(
    std::array{tensor<&DecodeCase::query>("query"), tensor<&DecodeCase::key_cache>("key_cache"),
               tensor<&DecodeCase::value_cache>("value_cache"),
               tensor<&DecodeCase::block_tables>("block_tables"), tensor<&DecodeCase::seq_lens>("seq_lens"),
               tensor<&DecodeCase::alibi_slopes>("alibi_slopes")},
    quant_tensors<&DecodeCase::quant>());

/// prefix (context_attention_fwd).
inline constexpr auto kPrefixInputs = concat(
    std::array{tensor<&PrefixCase::query>("query"), tensor<&PrefixCase::key>("key"),
               tensor<&PrefixCase::value>("value"), tensor<&PrefixCase::key_cache>("key_cache"),
               tensor<&PrefixCase::value_cache>("value_cache"),
               tensor<&PrefixCase::block_tables>("block_tables"), tensor<&PrefixCase::seq_lens>("seq_lens"),
               tensor<&PrefixCase::query_start_loc>("query_start_loc"),
               tensor<&PrefixCase::alibi_slopes>("alibi_slopes")},
    quant_tensors<&PrefixCase::quant>());

/// reshape_and_cache: the new tokens, where they go, and the caches before the write.
inline constexpr auto kReshapeInputs =
    concat(std::array{tensor<&ReshapeCase::key>("key"), tensor<&ReshapeCase::value>("value"),
                      tensor<&ReshapeCase::slot_mapping>("slot_mapping"),
                      tensor<&ReshapeCase::key_cache_before>("key_cache_before"),
                      tensor<&ReshapeCase::value_cache_before>("value_cache_before"),
                      tensor<&ReshapeCase::block_tables>("block_tables"),
                      tensor<&ReshapeCase::seq_lens>("seq_lens")},
           quant_tensors<&ReshapeCase::quant_before>(true));

/// write_and_attend: the prefix step's inputs with the caches before its write.
inline constexpr auto kWriteAndAttendInputs =
    concat(std::array{tensor<&WriteAndAttendCase::step, &PrefixCase::query>("query"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::key>("key"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::value>("value"),
                      tensor<&WriteAndAttendCase::key_cache_before>("key_cache_before"),
                      tensor<&WriteAndAttendCase::value_cache_before>("value_cache_before"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::slot_mapping>("slot_mapping"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::block_tables>("block_tables"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::seq_lens>("seq_lens"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::query_start_loc>("query_start_loc"),
                      tensor<&WriteAndAttendCase::step, &PrefixCase::alibi_slopes>("alibi_slopes")},
           quant_tensors<&WriteAndAttendCase::quant_before>(true));

/// The written caches of a seeded case `C` that writes them (reshape_and_cache's after the
/// write, write_and_attend's step): the caches and an integer cache's scales and zero points,
/// judged bit for bit under these names (kinds/cache_outputs.hpp's rows).
template <auto KeyCache, auto ValueCache, auto Quant>
constexpr auto written_cache_tensors() {
  return concat(std::array{tensor<KeyCache>("key_cache"), tensor<ValueCache>("value_cache")},
                quant_tensors<Quant>());
}
inline constexpr auto kReshapeWrites =
    written_cache_tensors<&ReshapeCase::key_cache, &ReshapeCase::value_cache, &ReshapeCase::quant>();
inline constexpr auto kWrittenStepCaches =
    written_cache_tensors<&PrefixCase::key_cache, &PrefixCase::value_cache, &PrefixCase::quant>();

}  // namespace pao::kinds

// Integer KV caches (kv_cache_dtype u8 / i8): asymmetric quantisation with a scale and a zero
// point per group of elements, the scheme of OpenVINO's PagedAttention, LMDeploy / TurboMind and
// KIVI (key by channel, value by token). One definition of every part, used by the case builders,
// the kernels (exact and kernel precision), reshape_and_cache, the diff, the invariants and the
// simulator:
//
//   granularity (per cache tensor)   a scale / zero point for each        param tensor shape
//   by_token                         (block, kv head, token)              [num_blocks, num_kv_heads,
//   block_size, 1] group_G                          (block, kv head, token, G dims)      [num_blocks,
//   num_kv_heads, block_size, head_size/G] by_channel                       (block, kv head, dim): over the
//   [num_blocks, num_kv_heads, 1, head_size]
//                                    block's tokens (OpenVINO's key)
//
//   value = (code - zero_point) * scale
//     exact precision:  in fp64 (exact for rule minmax_zero: a 9-bit integer times an f32; one
//                       rounding at most with rule openvino's fractional zero points)
//     kernel precision: (float(code) - zero_point) * scale in f32 (one rounding with an integer
//                       zero point, two with openvino's), then rounded to the activation dtype, the
//                       dequant point of vLLM's fp8 caches (scaled_convert)
//
//   parameters of a group of values v (torch's MinMaxObserver: the range always holds 0):
//     lo = min(0, min v), hi = max(0, max v)
//     scale = (hi - lo) / (qmax - qmin) in f32, stored in scale_dtype; 1 when hi == lo
//     zero_point = clamp(round_half_even(qmin - lo / scale), qmin, qmax), stored in zero_point_dtype
//   code of a value x: clamp(round(x / scale + zero_point), qmin, qmax) in f32, rounded
//   half-to-even (a hardware convert, OpenVINO's default) or half-away-from-zero (std::round) as
//   the spec's `rounding` says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pao/core/dtype.hpp"
#include "pao/core/hd.hpp"
#include "pao/core/tensor.hpp"
#include "pao/layout/paged_cache_layout.hpp"

namespace pao {

enum class QuantGranularity : std::uint8_t { by_token, by_channel, group };

/// How one cache tensor (K or V) is quantised.
struct TensorQuant {
  QuantGranularity granularity = QuantGranularity::by_token;
  std::int32_t group_size = 0;  // group: dims per scale (divides head_size); else 0

  friend bool operator==(const TensorQuant&, const TensorQuant&) = default;
};

enum class QuantRounding : std::uint8_t { half_even, half_away };

/// How a group's scale, zero point and codes are computed (the table at the top of this file):
///   minmax_zero  pao's rule (torch's MinMaxObserver): 0 in the range, integer zero points, codes by
///                x / scale + zero_point rounded as `rounding` says;
///   openvino     OpenVINO 2026.4.1's CPU quantiser, measured bit for bit on its u8 / u4 caches
///                (docs/golden.md, "Integer KV caches"): lo and hi the group's own min and max;
///                scale = f32(f32(hi - lo) / qmax) (by_channel: f32(hi - lo) * f32(1 / qmax)), 1e-4
///                when 0; a fractional zero point f32(-lo / scale); code =
///                clamp(rint(fma(x, f32(1 / scale), zero_point))). Its vector loops only: head_size
///                a multiple of 16, f32 parameters, u8 or u4, half-even.
enum class QuantRule : std::uint8_t { minmax_zero, openvino };

/// A case's kv_quant: both tensors' granularities, the parameters' dtypes, the writers' rounding.
/// The defaults are OpenVINO's u8 cache: key by channel, value by token, f32 scale and zero point.
struct KVQuant {
  TensorQuant key{QuantGranularity::by_channel, 0};
  TensorQuant value{QuantGranularity::by_token, 0};
  DType scale_dtype = DType::f32;       // f32 or f16
  DType zero_point_dtype = DType::f32;  // f32 or f16 (zero points are integers: exact in both)
  QuantRounding rounding = QuantRounding::half_even;
  /// Bits per code: 8, or 4 for kv_cache_dtype u4 (a u8 cache whose codes are 0..15, one per byte
  /// in pao's tensors; 0.5 bytes per element when packed two to a byte, element 2i in the low
  /// nibble of byte i: pack_u4 / unpack_u4).
  std::int32_t bits = 8;
  QuantRule rule = QuantRule::minmax_zero;

  const TensorQuant& of(CacheTensor tensor) const { return tensor == CacheTensor::key ? key : value; }
  friend bool operator==(const KVQuant&, const KVQuant&) = default;
};

/// "by_token", "by_channel", "group_32".
std::string to_string(const TensorQuant& q);
/// Parses what to_string writes; nullopt when `text` is none of them.
std::optional<TensorQuant> parse_tensor_quant(std::string_view text);
/// "half_even" or "half_away".
const char* rounding_name(QuantRounding r);
std::optional<QuantRounding> parse_rounding(std::string_view text);
/// "minmax_zero" or "openvino".
const char* rule_name(QuantRule r);
std::optional<QuantRule> parse_rule(std::string_view text);
/// Why `spec` cannot quantise a cache of `code_dtype` and `head_size` under its rule (openvino's
/// conditions), or nullopt.
std::optional<std::string> quant_rule_conditions(const KVQuant& spec, DType code_dtype,
                                                 std::int32_t head_size);

/// Why `q` cannot quantise a cache of `head_size` (a group that does not divide it), or nullopt.
std::optional<std::string> tensor_quant_rule(const TensorQuant& q, std::int32_t head_size);

/// The golden tensor of `tensor`'s scales or zero points: key_cache_scale, value_cache_zero_point.
constexpr std::string_view quant_param_name(CacheTensor tensor, bool zero_point) {
  if (tensor == CacheTensor::key) return zero_point ? "key_cache_zero_point" : "key_cache_scale";
  return zero_point ? "value_cache_zero_point" : "value_cache_scale";
}

/// The shape of a param tensor (table above).
Shape quant_param_shape(const TensorQuant& q, std::int64_t num_blocks, std::int64_t num_kv_heads,
                        std::int64_t head_size, std::int64_t block_size);

/// Where the scale / zero point of (block, kv head, token in block, dim) lives in a contiguous
/// param tensor of quant_param_shape.
struct QuantParamLayout {
  std::int64_t block_stride = 0, head_stride = 0, token_stride = 0;
  std::int32_t dims_per_param = 1;  // by_token: head_size; group: G; by_channel: 1

  PAO_HD std::int64_t offset(std::int64_t block, std::int64_t head, std::int64_t token,
                             std::int64_t dim) const {
    return block * block_stride + head * head_stride + token * token_stride + dim / dims_per_param;
  }
};
QuantParamLayout quant_param_layout(const TensorQuant& q, std::int64_t num_kv_heads, std::int64_t head_size,
                                    std::int64_t block_size);

/// The bytes of scales and zero points per cache element of `tensor` (by_token: 1 / head_size of
/// a pair; group_G: 1 / G; by_channel: 1 / block_size): what the simulator adds to the code's
/// bytes (bits / 8).
double quant_param_bytes_per_element(const KVQuant& spec, CacheTensor tensor, std::int32_t head_size,
                                     std::int32_t block_size);

/// [qmin, qmax] of an integer cache dtype: u8 [0, 255], i8 [-128, 127]; with 4 bits u4 [0, 15].
struct CodeRange {
  double lo = 0, hi = 0;
};
CodeRange code_range(DType code_dtype, std::int32_t bits = 8);

/// u4 codes (0..15) two to a byte, element 2i in the low nibble of byte i: n codes (n even) into
/// n / 2 bytes, and back. Throws pao::Error for an odd n or a code above 15.
void pack_u4(const std::uint8_t* codes, std::int64_t n, std::uint8_t* packed);
void unpack_u4(const std::uint8_t* packed, std::int64_t n, std::uint8_t* codes);

/// The scale and zero point of one group, as stored (already rounded to their dtypes).
struct QuantParams {
  float scale = 1.0f;
  float zero_point = 0.0f;
};

/// The parameters of the `n` values v[0], v[stride], ... (finite) of a group of `granularity`, by
/// spec's rule.
QuantParams choose_quant_params(const float* v, std::int64_t n, std::int64_t stride, DType code_dtype,
                                const KVQuant& spec,
                                QuantGranularity granularity = QuantGranularity::by_token);
/// The code of x (finite) under p by spec's rule and rounding, clamped to `range`.
std::int32_t quantise(float x, const QuantParams& p, CodeRange range, const KVQuant& spec);

/// One token's row x[0, head_size) quantised in groups of `dims_per_param` dims (by_token: all of
/// them; group_G: G): params[head_size / dims_per_param] and codes[head_size].
void quantise_row(const float* x, std::int32_t head_size, std::int32_t dims_per_param, DType code_dtype,
                  const KVQuant& spec, QuantParams* params, std::int32_t* codes);
/// by_channel: the rows [n][head_size] of a block's tokens quantised dim by dim over the n tokens:
/// params[head_size] and codes[n][head_size].
void quantise_block_by_channel(const float* rows, std::int32_t n, std::int32_t head_size, DType code_dtype,
                               const KVQuant& spec, QuantParams* params, std::int32_t* codes);

/// (code - zero_point) * scale: exact (fp64) and kernel precision (f32, before the activation
/// rounding).
inline double dequantise_exact(double code, double scale, double zero_point) {
  return (code - zero_point) * scale;
}
PAO_HD float dequantise_kernel(float code, float scale, float zero_point) {
  return (code - zero_point) * scale;
}

}  // namespace pao

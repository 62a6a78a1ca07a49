// Integer KV-cache quantisation (pao/numerics/kv_quant.hpp).
#include "pao/numerics/kv_quant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pao/core/error.hpp"
#include "pao/numerics/element.hpp"

namespace pao {

std::string to_string(const TensorQuant& q) {
  switch (q.granularity) {
    case QuantGranularity::by_token:
      return "by_token";
    case QuantGranularity::by_channel:
      return "by_channel";
    case QuantGranularity::group:
      return "group_" + std::to_string(q.group_size);
  }
  return "?";
}

std::optional<TensorQuant> parse_tensor_quant(std::string_view text) {
  if (text == "by_token") return TensorQuant{QuantGranularity::by_token, 0};
  if (text == "by_channel") return TensorQuant{QuantGranularity::by_channel, 0};
  constexpr std::string_view kGroup = "group_";
  if (!text.starts_with(kGroup) || text.size() == kGroup.size() || text.size() > kGroup.size() + 6)
    return std::nullopt;
  std::int32_t g = 0;
  for (const char ch : text.substr(kGroup.size())) {
    if (ch < '0' || ch > '9') return std::nullopt;
    g = g * 10 + (ch - '0');
  }
  if (g <= 0) return std::nullopt;
  return TensorQuant{QuantGranularity::group, g};
}

const char* rounding_name(QuantRounding r) {
  return r == QuantRounding::half_even ? "half_even" : "half_away";
}

std::optional<QuantRounding> parse_rounding(std::string_view text) {
  if (text == "half_even") return QuantRounding::half_even;
  if (text == "half_away") return QuantRounding::half_away;
  return std::nullopt;
}

const char* rule_name(QuantRule r) { return r == QuantRule::minmax_zero ? "minmax_zero" : "openvino"; }

std::optional<QuantRule> parse_rule(std::string_view text) {
  if (text == "minmax_zero") return QuantRule::minmax_zero;
  if (text == "openvino") return QuantRule::openvino;
  return std::nullopt;
}

std::optional<std::string> quant_rule_conditions(const KVQuant& spec, DType code_dtype,
                                                 std::int32_t head_size) {
  if (spec.rule != QuantRule::openvino) return std::nullopt;
  if (code_dtype != DType::u8) return "rule openvino: OpenVINO's integer caches are u8 and u4 (not i8)";
  if (head_size % 16 != 0)
    return "rule openvino: head_size " + std::to_string(head_size) +
           " is not a multiple of 16 (only OpenVINO's vector loops are modelled; its scalar tail quantises "
           "otherwise)";
  if (spec.scale_dtype != DType::f32 || spec.zero_point_dtype != DType::f32)
    return "rule openvino: OpenVINO stores f32 scales and zero points";
  if (spec.rounding != QuantRounding::half_even)
    return "rule openvino: OpenVINO's vector loop rounds half to even";
  return std::nullopt;
}

std::optional<std::string> tensor_quant_rule(const TensorQuant& q, std::int32_t head_size) {
  if (q.granularity != QuantGranularity::group) return std::nullopt;
  if (q.group_size > 0 && head_size % q.group_size == 0) return std::nullopt;
  return "group_size " + std::to_string(q.group_size) + " does not divide head_size " +
         std::to_string(head_size) + " (a group is a run of dims of one token)";
}

namespace {

/// rows x cols of one (block, kv head) of a param tensor.
std::pair<std::int64_t, std::int64_t> param_rows_cols(const TensorQuant& q, std::int64_t head_size,
                                                      std::int64_t block_size) {
  switch (q.granularity) {
    case QuantGranularity::by_token:
      return {block_size, 1};
    case QuantGranularity::by_channel:
      return {1, head_size};
    case QuantGranularity::group:
      return {block_size, head_size / std::max(q.group_size, 1)};
  }
  return {0, 0};
}

}  // namespace

Shape quant_param_shape(const TensorQuant& q, std::int64_t num_blocks, std::int64_t num_kv_heads,
                        std::int64_t head_size, std::int64_t block_size) {
  const auto [rows, cols] = param_rows_cols(q, head_size, block_size);
  return {num_blocks, num_kv_heads, rows, cols};
}

QuantParamLayout quant_param_layout(const TensorQuant& q, std::int64_t num_kv_heads, std::int64_t head_size,
                                    std::int64_t block_size) {
  const auto [rows, cols] = param_rows_cols(q, head_size, block_size);
  QuantParamLayout l;
  l.head_stride = rows * cols;
  l.block_stride = num_kv_heads * l.head_stride;
  l.token_stride = q.granularity == QuantGranularity::by_channel ? 0 : cols;
  l.dims_per_param = static_cast<std::int32_t>(q.granularity == QuantGranularity::by_token ? head_size
                                               : q.granularity == QuantGranularity::group  ? q.group_size
                                                                                           : 1);
  return l;
}

double quant_param_bytes_per_element(const KVQuant& spec, CacheTensor tensor, std::int32_t head_size,
                                     std::int32_t block_size) {
  const TensorQuant& q = spec.of(tensor);
  const double pair = static_cast<double>(dtype_size(spec.scale_dtype) + dtype_size(spec.zero_point_dtype));
  switch (q.granularity) {
    case QuantGranularity::by_token:
      return pair / head_size;
    case QuantGranularity::by_channel:
      return pair / block_size;
    case QuantGranularity::group:
      return pair / q.group_size;
  }
  return 0.0;
}

CodeRange code_range(DType code_dtype, std::int32_t bits) {
  require(is_integer_cache(code_dtype), "code_range: ", dtype_name(code_dtype),
          " is not an integer cache dtype");
  require(bits == 8 || (bits == 4 && code_dtype == DType::u8), "code_range: ", bits, "-bit ",
          dtype_name(code_dtype), " codes: pao has u8, i8 and u4");
  if (bits == 4) return {0, 15};
  return dtype_info(code_dtype).kind == 'u' ? CodeRange{0, 255} : CodeRange{-128, 127};
}

void pack_u4(const std::uint8_t* codes, std::int64_t n, std::uint8_t* packed) {
  require(n % 2 == 0, "pack_u4: ", n, " codes: u4 packs pairs");
  for (std::int64_t i = 0; i < n; ++i)
    require(codes[i] <= 15, "pack_u4: code ", i, " = ", static_cast<int>(codes[i]), " does not fit 4 bits");
  for (std::int64_t i = 0; i < n / 2; ++i)
    packed[i] = static_cast<std::uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
}

void unpack_u4(const std::uint8_t* packed, std::int64_t n, std::uint8_t* codes) {
  require(n % 2 == 0, "unpack_u4: ", n, " codes: u4 packs pairs");
  for (std::int64_t i = 0; i < n / 2; ++i) {
    codes[2 * i] = packed[i] & 0x0F;
    codes[2 * i + 1] = static_cast<std::uint8_t>(packed[i] >> 4);
  }
}

namespace {

/// x rounded to an integer by `rule`.
float round_by(float x, QuantRounding rule) {
  return rule == QuantRounding::half_even ? std::nearbyint(x)
                                          : std::round(x);  // nearbyint: the default RNE mode
}

}  // namespace

namespace {

/// OpenVINO 2026.4.1's parameters of a group (its vector loops; kv_quant.hpp).
QuantParams openvino_params(const float* v, std::int64_t n, std::int64_t stride, float levels,
                            bool by_channel) {
  float lo = v[0], hi = v[0];
  for (std::int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, v[i * stride]);
    hi = std::max(hi, v[i * stride]);
  }
  const float range = hi - lo;
  QuantParams p;
  p.scale = by_channel ? range * (1.0f / levels) : range / levels;
  if (p.scale == 0.0f) p.scale = 1e-4f;
  p.zero_point = -lo / p.scale;
  return p;
}

}  // namespace

QuantParams choose_quant_params(const float* v, std::int64_t n, std::int64_t stride, DType code_dtype,
                                const KVQuant& spec, QuantGranularity granularity) {
  const CodeRange r = code_range(code_dtype, spec.bits);
  if (spec.rule == QuantRule::openvino)
    return openvino_params(v, n, stride, static_cast<float>(r.hi),
                           granularity == QuantGranularity::by_channel);
  float lo = 0.0f, hi = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, v[i * stride]);
    hi = std::max(hi, v[i * stride]);
  }
  QuantParams p;
  float scale = (hi - lo) / static_cast<float>(r.hi - r.lo);
  if (!(scale > 0.0f)) scale = 1.0f;
  p.scale = static_cast<float>(round_to_dtype(spec.scale_dtype, scale));
  if (!(p.scale > 0.0f))
    p.scale = static_cast<float>(round_to_dtype(spec.scale_dtype, 1.0));  // f16 underflow
  const float zp = std::nearbyint(static_cast<float>(r.lo) - lo / p.scale);
  p.zero_point = static_cast<float>(
      round_to_dtype(spec.zero_point_dtype, std::clamp(static_cast<double>(zp), r.lo, r.hi)));
  return p;
}

std::int32_t quantise(float x, const QuantParams& p, CodeRange r, const KVQuant& spec) {
  const float t = spec.rule == QuantRule::openvino ? std::nearbyint(std::fma(x, 1.0f / p.scale, p.zero_point))
                                                   : round_by(x / p.scale + p.zero_point, spec.rounding);
  return static_cast<std::int32_t>(std::clamp(static_cast<double>(t), r.lo, r.hi));
}

void quantise_row(const float* x, std::int32_t head_size, std::int32_t dims_per_param, DType code_dtype,
                  const KVQuant& spec, QuantParams* params, std::int32_t* codes) {
  for (std::int32_t d0 = 0, g = 0; d0 < head_size; d0 += dims_per_param, ++g) {
    params[g] = choose_quant_params(x + d0, dims_per_param, 1, code_dtype, spec);
    for (std::int32_t d = d0; d < d0 + dims_per_param; ++d)
      codes[d] = quantise(x[d], params[g], code_range(code_dtype, spec.bits), spec);
  }
}

void quantise_block_by_channel(const float* rows, std::int32_t n, std::int32_t head_size, DType code_dtype,
                               const KVQuant& spec, QuantParams* params, std::int32_t* codes) {
  for (std::int32_t d = 0; d < head_size; ++d) {
    params[d] = choose_quant_params(rows + d, n, head_size, code_dtype, spec, QuantGranularity::by_channel);
    for (std::int32_t t = 0; t < n; ++t)
      codes[t * head_size + d] =
          quantise(rows[t * head_size + d], params[d], code_range(code_dtype, spec.bits), spec);
  }
}

}  // namespace pao

// f32 queries over an fp8 cache: vLLM's CUDA decode kernel dequantises through half when it loads
// vectors of 2+ elements (scaled_vec_conversion<float2, uint16_t> in quant_utils.cuh: fp8 -> half,
// times the scale in fp32, rounded to half, widened). The kernel precision must do the same, bit
// for bit; an independent emulation (fp8 decoded from its bit fields here, Eigen::half for the
// rounding) is the reference.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/prefix/kv_tile.hpp"  // internal: the one dequantising tile loader
#include "pao/cases/case_tensors.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"

using namespace pao;

namespace {

/// An fp8 code's value from its bit fields (e4m3fn: bias 7, no inf, S.1111.111 NaN; e5m2: bias 15).
float fp8_value(std::uint8_t code, bool e4m3) {
  const int mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exp = (code >> mant_bits) & (e4m3 ? 0xf : 0x1f);
  const int mant = code & ((1 << mant_bits) - 1);
  const float sign = (code & 0x80) ? -1.0f : 1.0f;
  if (e4m3 && exp == 0xf && mant == 0x7) return std::nanf("");
  if (!e4m3 && exp == 0x1f) return mant == 0 ? sign * INFINITY : std::nanf("");
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), 1 - bias - mant_bits);
  return sign * std::ldexp(static_cast<float>((1 << mant_bits) + mant), exp - bias - mant_bits);
}

/// vLLM's half2 path for one element: half(fp8), widened, times scale in fp32, to half, widened.
float vllm_half_path(std::uint8_t code, bool e4m3, float scale) {
  const float widened = static_cast<float>(Eigen::half(fp8_value(code, e4m3)));  // exact
  return static_cast<float>(Eigen::half(widened * scale));
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  std::uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

}  // namespace

TEST_CASE("the fp8 -> half -> f32 dequantisation equals vLLM's half2 path for every code and scale") {
  // One block of 16 tokens x 16 dims holds all 256 codes, in NHD order.
  const std::int32_t bs = 16, hs = 16;
  for (const DType cd : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    const bool e4m3 = cd == DType::fp8_e4m3;
    Tensor cache(cd, {1, bs, 1, hs});
    for (int i = 0; i < 256; ++i) cache.bytes()[i] = static_cast<std::byte>(i);
    const PagedCacheLayout layout = contiguous_cache_layout(KVLayout::nhd, CacheTensor::key, cache.shape());
    for (const float scale : {4e-4f, 0.0173f, 1.0f, 3.7f, 300.0f}) {
      float half_path[256], direct[256];
      detail::load_tile_kernel(cache.bytes(), layout, cd, scale, DType::f32, 0, 0, bs, bs, hs, half_path,
                               {hs, 1}, true);
      detail::load_tile_kernel(cache.bytes(), layout, cd, scale, DType::f32, 0, 0, bs, bs, hs, direct,
                               {hs, 1}, false);
      int differ = 0;
      for (int i = 0; i < 256; ++i) {
        const auto code = static_cast<std::uint8_t>(i);
        INFO("code ", i, " scale ", scale, " ", dtype_name(cd));
        CHECK(same_bits(half_path[i], vllm_half_path(code, e4m3, scale)));
        CHECK(same_bits(direct[i], fp8_value(code, e4m3) * scale));  // the single-float path
        differ += !same_bits(half_path[i], direct[i]);
      }
      if (scale == 4e-4f) CHECK(differ > 100);  // not a power of two: the half rounding shows
      if (scale == 1.0f) CHECK(differ == 0);    // fp8 values are halves already
    }
  }
}

TEST_CASE("the rule: f32 activations in vectors of 2+ (vLLM's decode geometry)") {
  // Warp 32: K vectors of 16 / (thread_group_size * 4) floats; V vectors of min(4, block_size).
  const auto k_vec = [](std::int32_t warp, std::int32_t bs) {
    return DecodeGeometry::make(warp, 128, bs, 4).vec_size;
  };
  CHECK(k_vec(32, 8) == 1);   // thread group 4: one float per lane, no half rounding
  CHECK(k_vec(32, 16) == 2);  // float2
  CHECK(k_vec(32, 32) == 4);  // Float4_
  CHECK(k_vec(64, 16) == 1);  // BI-V100's warp 64: groups of 4
  CHECK(DecodeGeometry::make(32, 128, 8, 4).v_vec_size == 4);
  CHECK(fp8_dequant_through_half(DType::f32, 2));
  CHECK_FALSE(fp8_dequant_through_half(DType::f32, 1));
  CHECK_FALSE(fp8_dequant_through_half(DType::f16, 8));
  CHECK_FALSE(fp8_dequant_through_half(DType::bf16, 8));
}

TEST_CASE("V1 kernel precision of one-token f32 sequences over fp8 is the half-rounded V row, bit for bit") {
  // With one token, p = 1 / (1 + 1e-6) in f32 and out = fp32(p * V), so every output element shows
  // whether V went through half: it must, as in vLLM (V vectors of 4 floats).
  for (const std::int32_t bs : {8, 16, 32}) {
    for (const auto kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      cases::Case spec = test::f32_over_fp8_case(bs, kv, {1, 1, 1});
      // uniform(-1/8, 1/8) / 4e-4: codes up to ~312, across the fp8 range without saturating.
      spec.seed = static_cast<std::uint64_t>(bs);
      INFO("block_size ", bs);
      const cases::DecodeCase c = cases::make_decode_case(spec);
      const Tensor out = paged_attention_v1(c.args(), Precision::kernel, c.spec).out;
      const bool e4m3 = kv == DType::fp8_e4m3;
      const float p = 1.0f / (1.0f + 1e-6f);
      int mismatches = 0;
      for (std::int64_t s = 0; s < 3; ++s) {
        const auto block = static_cast<std::int64_t>(c.block_tables.at({s, 0}));
        for (std::int64_t h = 0; h < 4; ++h)
          for (std::int64_t d = 0; d < 64; ++d) {
            // vLLM's value cache [blocks, kv_heads, head_size, block_size]: token 0 of the block.
            const auto code =
                static_cast<std::uint8_t>(c.value_cache.bytes()[((block * 2 + h / 2) * 64 + d) * bs]);
            const float want = p * vllm_half_path(code, e4m3, 4e-4f);
            mismatches += !same_bits(static_cast<float>(out.at({s, h, d})), want);
          }
      }
      CHECK(mismatches == 0);
    }
  }
}

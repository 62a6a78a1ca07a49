// K / V caches read through non-contiguous strided views: a padded block stride (NaN in the
// padding) and K and V blocks interleaved in one allocation. Every layout goes through the one
// strided accessor, so the outputs must be the contiguous caches' bits.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"

using namespace pao;

namespace {

/// Copies `src` (contiguous) into `dst` at element `base` + sum(index[i] * strides[i]) and
/// returns the view of that placement.
TensorView place(const Tensor& src, Tensor& dst, std::int64_t base, const Shape& strides) {
  const std::size_t es = dtype_size(src.dtype());
  const Shape& shape = src.shape();
  Shape index(shape.size(), 0);
  for (std::int64_t i = 0; i < src.numel(); ++i) {
    std::int64_t at = base;
    for (std::size_t d = 0; d < shape.size(); ++d) at += index[d] * strides[d];
    std::memcpy(dst.bytes() + static_cast<std::size_t>(at) * es,
                src.bytes() + static_cast<std::size_t>(i) * es, es);
    for (std::size_t d = shape.size(); d-- > 0;)  // row-major increment
      if (++index[d] < shape[d])
        break;
      else
        index[d] = 0;
  }
  return TensorView(dst.bytes() + static_cast<std::size_t>(base) * es, src.dtype(), shape, strides);
}

/// Row-major strides of `shape` with the block (first) dimension `block_stride` apart.
Shape block_strided(const Shape& shape, std::int64_t block_stride) {
  Shape s = contiguous_strides(shape);
  s[0] = block_stride;
  return s;
}

void check_same(const DecodeArgs& contiguous, const DecodeArgs& strided, const KernelTuning& tuning) {
  for (Precision prec : {Precision::kernel, Precision::exact}) {
    const DecodeOutputs a = paged_attention_v2(contiguous, prec, tuning),
                        b = paged_attention_v2(strided, prec, tuning);
    CHECK(test::bitwise_equal(a.out, b.out));
    CHECK(test::bitwise_equal(a.tmp_out, b.tmp_out));
    CHECK(test::bitwise_equal(a.exp_sums, b.exp_sums));
    CHECK(test::bitwise_equal(a.max_logits, b.max_logits));
    CHECK(test::bitwise_equal(paged_attention_v1(contiguous, prec, tuning).out,
                              paged_attention_v1(strided, prec, tuning).out));
  }
}

}  // namespace

TEST_CASE("caches behind padded or K/V-interleaved strided views give the contiguous caches' bits") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  int n = 0;
  for (KVLayout layout : kAllKVLayouts)
    for (DType cache : {DType::f16, DType::bf16, DType::fp8_e4m3}) {
      cases::Case spec = test::attention_case(8, 2, 64, 16, {0, 1, 37, 100});
      spec.partition_size = 32;
      spec.kv_layout = layout;
      spec.dtype = cache == DType::bf16 ? DType::bf16 : DType::f16;
      spec.kv_cache_dtype = test::kv_cache_of(cache);
      spec.k_scale = cache == DType::fp8_e4m3 ? 0.5f : 1.0f;
      spec.v_scale = cache == DType::fp8_e4m3 ? 0.25f : 1.0f;
      spec.alibi = n % 2 == 1;
      spec.seed = 300 + static_cast<std::uint64_t>(n++);
      INFO(test::describe(spec));
      const cases::DecodeCase c = cases::make_decode_case(spec);
      const std::int64_t nb = c.key_cache.size(0);
      const std::int64_t k_block = c.key_cache.numel() / nb, v_block = c.value_cache.numel() / nb;

      SUBCASE("padded block stride") {
        constexpr std::int64_t pad = 7;
        Tensor k_buf = Tensor::filled(cache, {nb * (k_block + pad)}, nan);
        Tensor v_buf = Tensor::filled(cache, {nb * (v_block + pad)}, nan);
        DecodeArgs args = c.args();
        args.key_cache = place(c.key_cache, k_buf, 0, block_strided(c.key_cache.shape(), k_block + pad));
        args.value_cache =
            place(c.value_cache, v_buf, 0, block_strided(c.value_cache.shape(), v_block + pad));
        REQUIRE_FALSE(args.key_cache.is_contiguous());
        check_same(c.args(), args, spec);
      }
      SUBCASE("K and V blocks interleaved in one allocation") {
        Tensor kv_buf = Tensor::filled(cache, {nb * (k_block + v_block)}, nan);
        DecodeArgs args = c.args();
        args.key_cache = place(c.key_cache, kv_buf, 0, block_strided(c.key_cache.shape(), k_block + v_block));
        args.value_cache =
            place(c.value_cache, kv_buf, k_block, block_strided(c.value_cache.shape(), k_block + v_block));
        REQUIRE_FALSE(args.value_cache.is_contiguous());
        check_same(c.args(), args, spec);
      }
    }
}

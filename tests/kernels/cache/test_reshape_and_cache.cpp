// reshape_and_cache: written slots hold the stored form of each token (the same bits, or the fp8
// quantisation float(x) / scale with saturation), skipped slots and every other byte are
// untouched, both layouts; and its errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "pao/core/error.hpp"
#include "pao/core/random.hpp"
#include "pao/kernels/reshape_and_cache.hpp"
#include "pao/numerics/element.hpp"
#include "pao/numerics/formats.hpp"

using namespace pao;

namespace {

constexpr std::int64_t kBlocks = 7, kBlockSize = 8, kHeads = 2, kHeadSize = 32;

struct Caches {
  Tensor key, value;
};

Caches make_caches(DType dtype, KVLayout layout) {
  const std::int64_t x = 16 / static_cast<std::int64_t>(dtype_size(dtype));
  Shape ks = layout == KVLayout::vllm  ? Shape{kBlocks, kHeads, kHeadSize / x, kBlockSize, x}
             : layout == KVLayout::nhd ? Shape{kBlocks, kBlockSize, kHeads, kHeadSize}
                                       : Shape{kBlocks, kHeads, kBlockSize, kHeadSize};
  Shape vs = layout == KVLayout::vllm ? Shape{kBlocks, kHeads, kHeadSize, kBlockSize} : ks;
  // Every byte a recognisable pattern, so that a stray write shows.
  Caches c{Tensor(dtype, ks), Tensor(dtype, vs)};
  std::memset(c.key.bytes(), 0x5a, c.key.nbytes());
  std::memset(c.value.bytes(), 0xa5, c.value.nbytes());
  return c;
}

/// Element offset (in elements) of (block, head, token, dim) in a cache tensor of `layout`.
std::int64_t element(const Tensor& cache, KVLayout layout, bool key, std::int64_t block, std::int64_t head,
                     std::int64_t token, std::int64_t dim) {
  const TensorView v = cache.view();
  if (layout == KVLayout::nhd) return v.offset({block, token, head, dim});
  if (layout == KVLayout::hnd) return v.offset({block, head, token, dim});
  if (!key) return v.offset({block, head, dim, token});
  const std::int64_t x = cache.size(4);
  return v.offset({block, head, dim / x, token, dim % x});
}

/// The bits a token's element x must have in a cache of dtype `cd` with scale `scale`.
std::uint8_t fp8_code(DType cd, float x, float scale) {
  const float q = x / scale;
  return cd == DType::fp8_e4m3 ? encode_fp8_e4m3_from_f32(q) : encode_fp8_e5m2_from_f32(q);
}

}  // namespace

TEST_CASE("reshape_and_cache writes exactly the mapped slots, in the stored form") {
  const DType activations[] = {DType::f32, DType::f16, DType::bf16};
  const DType fp8s[] = {DType::fp8_e4m3, DType::fp8_e5m2};
  int i = 0;
  for (DType act : activations) {
    for (int cache_kind = 0; cache_kind < 3; ++cache_kind) {
      const DType cd = cache_kind == 0 ? act : fp8s[cache_kind - 1];
      for (KVLayout layout : {KVLayout::vllm, KVLayout::nhd, KVLayout::hnd}) {
        for (bool per_head : {false, true}) {
          INFO("act=", dtype_name(act), " cache=", dtype_name(cd), " layout=", kv_layout_name(layout),
               " per_head=", per_head);
          Rng rng(static_cast<std::uint64_t>(900 + i++));
          const std::int64_t n = 20;
          Tensor key(act, {n + 3, kHeads, kHeadSize}), value(act, {n + 3, kHeads, kHeadSize});
          for (std::int64_t t = 0; t < n + 3; ++t)
            for (std::int64_t h = 0; h < kHeads; ++h)
              for (std::int64_t d = 0; d < kHeadSize; ++d) {
                // Some values far beyond the fp8 range (saturation), some tiny, a NaN.
                double k = rng.uniform(-2, 2), v = rng.uniform(-2, 2);
                if (d == 3) k *= 1e5;
                if (d == 5) v *= 1e-6;
                if (t == 4 && h == 1 && d == 7) k = std::numeric_limits<double>::quiet_NaN();
                key.set({t, h, d}, k);
                value.set({t, h, d}, v);
              }
          // A random permutation of the slots; every third token is padding (-1).
          std::vector<std::int64_t> slots(static_cast<std::size_t>(kBlocks * kBlockSize));
          for (std::size_t s = 0; s < slots.size(); ++s) slots[s] = static_cast<std::int64_t>(s);
          for (std::size_t s = slots.size(); s > 1; --s) std::swap(slots[s - 1], slots[rng.below(s)]);
          Tensor mapping(DType::i64, {n});
          for (std::int64_t t = 0; t < n; ++t)
            mapping.data<std::int64_t>()[t] = t % 3 == 2 ? -1 : slots[static_cast<std::size_t>(t)];

          AttentionOptions scales;
          scales.k_scale = 0.5f;
          scales.v_scale = 3.0f;
          if (per_head) {
            scales.k_head_scales = {0.25f, 2.0f};
            scales.v_head_scales = {0.125f, 1.5f};
          }
          Caches c = make_caches(cd, layout);
          const Tensor key_before = Tensor::copy_of(c.key), value_before = Tensor::copy_of(c.value);
          reshape_and_cache(key, value, c.key, c.value, mapping, layout, scales);

          std::vector<bool> written_k(static_cast<std::size_t>(c.key.numel())),
              written_v(static_cast<std::size_t>(c.value.numel()));
          const std::size_t es = dtype_size(cd), as = dtype_size(act);
          bool ok = true;
          for (std::int64_t t = 0; t < n; ++t) {
            const std::int64_t slot = mapping.data<std::int64_t>()[t];
            if (slot < 0) continue;
            for (std::int64_t h = 0; h < kHeads; ++h) {
              const float ks = per_head ? scales.k_head_scales[static_cast<std::size_t>(h)] : scales.k_scale;
              const float vs = per_head ? scales.v_head_scales[static_cast<std::size_t>(h)] : scales.v_scale;
              for (std::int64_t d = 0; d < kHeadSize; ++d) {
                const std::int64_t ek =
                    element(c.key, layout, true, slot / kBlockSize, h, slot % kBlockSize, d);
                const std::int64_t ev =
                    element(c.value, layout, false, slot / kBlockSize, h, slot % kBlockSize, d);
                written_k[static_cast<std::size_t>(ek)] = true;
                written_v[static_cast<std::size_t>(ev)] = true;
                const std::byte* src_k =
                    key.bytes() + key.view().offset({t, h, d}) * static_cast<std::int64_t>(as);
                const std::byte* src_v =
                    value.bytes() + value.view().offset({t, h, d}) * static_cast<std::int64_t>(as);
                if (is_fp8(cd)) {
                  const std::uint8_t want_k = fp8_code(cd, static_cast<float>(key.at({t, h, d})), ks);
                  const std::uint8_t want_v = fp8_code(cd, static_cast<float>(value.at({t, h, d})), vs);
                  ok &= std::memcmp(c.key.bytes() + ek, &want_k, 1) == 0;
                  ok &= std::memcmp(c.value.bytes() + ev, &want_v, 1) == 0;
                } else {
                  ok &= std::memcmp(c.key.bytes() + ek * static_cast<std::int64_t>(es), src_k, es) == 0;
                  ok &= std::memcmp(c.value.bytes() + ev * static_cast<std::int64_t>(es), src_v, es) == 0;
                }
              }
            }
          }
          CHECK(ok);
          // Everything else keeps its old bytes.
          bool untouched = true;
          for (std::int64_t e = 0; e < c.key.numel(); ++e)
            if (!written_k[static_cast<std::size_t>(e)])
              untouched &= std::memcmp(c.key.bytes() + e * static_cast<std::int64_t>(es),
                                       key_before.bytes() + e * static_cast<std::int64_t>(es), es) == 0;
          for (std::int64_t e = 0; e < c.value.numel(); ++e)
            if (!written_v[static_cast<std::size_t>(e)])
              untouched &= std::memcmp(c.value.bytes() + e * static_cast<std::int64_t>(es),
                                       value_before.bytes() + e * static_cast<std::int64_t>(es), es) == 0;
          CHECK(untouched);
        }
      }
    }
  }
}

TEST_CASE("reshape_and_cache to fp8: saturation, NaN and the decoded round trip") {
  Tensor key(DType::f32, {1, 1, 16}), value(DType::f32, {1, 1, 16});
  const float xs[16] = {1e9f, -1e9f, 448.0f, 449.0f,        464.0f, -500.0f, 57344.0f, 61440.0f,
                        0.0f, -0.0f, 1e-12f, std::nanf(""), 1.0f,   0.3f,    -0.7f,    100.0f};
  std::memcpy(key.bytes(), xs, sizeof xs);
  std::memcpy(value.bytes(), xs, sizeof xs);
  Tensor slot(DType::i32, {1});  // i32 slot mappings are accepted too
  for (DType cd : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    Tensor kc(cd, {1, 1, 1, 1, 16}), vc(cd, {1, 1, 16, 1});
    AttentionOptions scales;  // k_scale = v_scale = 1
    reshape_and_cache(key, value, kc, vc, slot, KVLayout::vllm, scales);
    const double max = cd == DType::fp8_e4m3 ? 448.0 : 57344.0;
    INFO(dtype_name(cd));
    CHECK(kc.at({0, 0, 0, 0, 0}) == max);  // saturates, never inf
    CHECK(kc.at({0, 0, 0, 0, 1}) == -max);
    CHECK(std::isnan(kc.at({0, 0, 0, 0, 11})));
    CHECK(std::signbit(kc.at({0, 0, 0, 0, 9})));  // -0 keeps its sign
    for (std::int64_t d = 0; d < 16; ++d) {
      if (std::isnan(xs[d])) continue;
      const double want = round_to_dtype(cd, xs[d]);  // one RNE rounding with saturation
      CHECK(kc.at({0, 0, 0, 0, d}) == want);
      CHECK(vc.at({0, 0, d, 0}) == want);
    }
  }
}

TEST_CASE("reshape_and_cache errors name the tensor, the index and the rule") {
  Caches c = make_caches(DType::f16, KVLayout::vllm);
  Tensor key(DType::f16, {4, kHeads, kHeadSize}), value(DType::f16, {4, kHeads, kHeadSize});
  auto mapping = [](std::vector<std::int64_t> v) {
    Tensor t(DType::i64, {static_cast<std::int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<std::int64_t>());
    return t;
  };
  auto throws = [&](const TensorView& k, const TensorView& v, Caches& caches, const Tensor& m,
                    const char* what) {
    const Tensor before = Tensor::copy_of(caches.key);
    CHECK_THROWS_WITH_AS(reshape_and_cache(k, v, caches.key, caches.value, m), doctest::Contains(what),
                         Error);
    CHECK(std::memcmp(before.bytes(), caches.key.bytes(), before.nbytes()) == 0);  // nothing written
  };
  throws(key, value, c, mapping({0, 1, 56, 3}),
         "slot_mapping[2] = 56: slot out of range [0, 56) = num_blocks 7 x block_size 8");
  throws(key, value, c, mapping({0, -2, 2, 3}), "slot_mapping[1] = -2: slot out of range");
  throws(key, value, c, mapping({5, 1, 5, 3}),
         "slot_mapping[2] = 5: slot already written by slot_mapping[0]");
  throws(key, value, c, mapping({0, 1, 2, 3, 4}), "slot_mapping: 5 entries but key has only 4 tokens");
  Tensor f32_map(DType::f32, {4});
  throws(key, value, c, f32_map, "slot_mapping: dtype f32, expected i64 (vLLM) or i32");
  Tensor other(DType::bf16, {4, kHeads, kHeadSize});
  throws(key, other, c, mapping({0, 1, 2, 3}), "value: dtype bf16 differs from key's f16");
  throws(other, other, c, mapping({0, 1, 2, 3}),
         "key_cache: dtype f16 must equal key's (bf16) or be a cache format (fp8_e4m3, fp8_e5m2, u8, i8)");
  Tensor short_value(DType::f16, {3, kHeads, kHeadSize});
  throws(key, short_value, c, mapping({0, 1, 2}), "value: shape [3, 2, 32] does not match");
  Tensor three_heads(DType::f16, {4, 3, kHeadSize});
  throws(three_heads, three_heads, c, mapping({0, 1, 2, 3}), "key_cache: 2 kv heads, expected 3");
  Caches fp8 = make_caches(DType::fp8_e4m3, KVLayout::vllm);
  AttentionOptions bad;
  bad.v_scale = -1.0f;
  CHECK_THROWS_WITH_AS(reshape_and_cache(key, value, fp8.key, fp8.value, mapping({0}), KVLayout::vllm, bad),
                       doctest::Contains("v_scale = -1: an fp8 scale must be finite and positive"), Error);
}

// Kernel precision of the prefix kernel: bit for bit the documented arithmetic (docs/prefix.md,
// transcribed in support/prefix_kernel_spec.hpp), within the derived bound of the exact precision,
// identical for any thread count; and the vectorised exp it uses equals pao::kernel_exp.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "kernels/prefix/prefix_tile_math.hpp"  // kernel_exp_n: internal, tested directly below
#include "pao/core/random.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "support/bits.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/prefix_cases.hpp"
#include "support/prefix_kernel_spec.hpp"
#include "support/prefix_reference.hpp"

using namespace pao;

namespace {

using test::max_abs;
using test::max_abs_diff;

using test::f32_bits;

}  // namespace

TEST_CASE("kernel prefix is bit for bit the documented fp32 arithmetic") {
  for (const auto& spec : test::all_prefix_cases()) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto spec_out = test::kernel_spec_prefix(c);
    const Tensor got = prefix_attention(c.args(), Precision::kernel, c.spec).out;
    const auto got64 = got.to_f64();
    REQUIRE(got64.size() == spec_out.size());
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < spec_out.size(); ++i) {
      const double want = round_to_dtype(spec.dtype, spec_out[i]);
      if (f32_bits(static_cast<float>(want)) != f32_bits(static_cast<float>(got64[i])) && mismatches++ == 0)
        first = i;
    }
    INFO("first mismatch at flat index ", first, ": got ", got64[first], ", spec ", spec_out[first]);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("kernel prefix is within twice a plain low-precision implementation's error") {
  // FlashAttention's rule: |kernel - exact| <= 2 |lowp - exact| + floor. The floor is 4 units of
  // roundoff of the output dtype times max |exact|. vLLM's guard (l + 1e-10) needs no term of its
  // own: l >= 1 (the row maximum contributes exp(0) = 1), and 1e-10 is below half an fp32 ulp of
  // any l >= 1, so l + 1e-10f == l.
  auto specs = test::all_prefix_cases();
  for (auto spec : test::all_prefix_cases())  // fp8 with the new tokens read back from the cache
    if (is_fp8(spec.cache_storage_dtype()) && spec.cache_new_tokens) {
      spec.new_kv_source = NewKVSource::cache;
      specs.push_back(spec);
    }
  for (const auto& spec : specs) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const auto exact = prefix_attention(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    const auto lowp = test::lowp_prefix_reference(c);
    const auto kernel = prefix_attention(c.args(), Precision::kernel, c.spec).out.to_f64();
    const double floor = 4 * unit_roundoff(spec.dtype) * std::max(1e-3, max_abs(exact));
    const double bound = 2 * max_abs_diff(lowp, exact) + floor;
    INFO("bound=", bound, " lowp error=", max_abs_diff(lowp, exact));
    REQUIRE(std::isfinite(bound));  // a NaN in the references would make any bound pass
    CHECK(max_abs_diff(kernel, exact) <= bound);
  }
}

TEST_CASE("prefix outputs are bit-identical for 1, 2 and 3 threads") {
  auto specs = test::prefix_feature_cases();
  specs.push_back(test::prefix_grid_cases()[2]);
  for (std::size_t i = 0; i < specs.size(); i += 3) {
    INFO(test::describe(specs[i]));
    const cases::PrefixCase c = cases::make_prefix_case(specs[i]);
    std::vector<PrefixOutputs> runs;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      for (Precision prec : {Precision::kernel, Precision::exact})
        runs.push_back(prefix_attention(c.args(), prec, c.spec));
    }
    omp_set_num_threads(2);
    for (std::size_t r = 2; r < runs.size(); ++r) {
      CHECK(test::bitwise_equal(runs[r % 2].out, runs[r].out));
      if (r % 2 == 1) CHECK(test::bitwise_equal(runs[1].out_f64, runs[r].out_f64));
    }
  }
}

TEST_CASE("one key: both precisions return the value row exactly") {
  // A token with no context sees only itself: p = exp(0) = 1, l = 1, acc = v, and the guard
  // vanishes (1 + 1e-10f == 1).
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    cases::Case spec = test::mixed_batch();
    spec.dtype = dt;
    test::set_lengths(spec, {0, 0}, {1, 1});
    spec.distribution = cases::ValueDistribution::large_logits;
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    const std::int64_t G = spec.num_heads / spec.num_kv_heads;
    for (Precision prec : {Precision::kernel, Precision::exact}) {
      const Tensor out = prefix_attention(c.args(), prec, c.spec).out;
      for (std::int64_t t = 0; t < 2; ++t)
        for (std::int64_t h = 0; h < spec.num_heads; ++h)
          for (std::int64_t d = 0; d < spec.head_size; ++d)
            REQUIRE(out.at({t, h, d}) == c.value.at({t, h / G, d}));
    }
  }
}

TEST_CASE("the vectorised exp equals pao::kernel_exp bit for bit") {
  std::vector<float> x;
  for (float v : {0.0f,
                  -0.0f,
                  1.0f,
                  -1.0f,
                  88.0f,
                  88.3762626647949f,
                  88.72283935546875f,
                  88.7228394f,
                  89.0f,
                  -87.0f,
                  -87.3365478515625f,
                  -88.0f,
                  -100.0f,
                  -103.0f,
                  -103.97908782958984f,
                  -103.979095f,
                  -104.0f,
                  -150.0f,
                  1e-30f,
                  -1e-30f,
                  HUGE_VALF,
                  -HUGE_VALF,
                  std::nanf(""),
                  -std::nanf("")})
    x.push_back(v);
  Rng rng(42);
  for (int i = 0; i < 200000; ++i) x.push_back(static_cast<float>(rng.uniform(-110.0, 92.0)));
  for (int i = 0; i < 20000; ++i)
    x.push_back(static_cast<float>(rng.uniform(-1.0, 1.0) * std::exp2(rng.uniform(-40, 0))));
  for (std::uint32_t u = 0xc2cf0000u; u < 0xc2d00000u; u += 7) {  // around -103.5 .. -104
    x.push_back(test::f32_from_bits(u));
  }
  std::vector<float> y(x.size());
  detail::kernel_exp_n(x.data(), y.data(), static_cast<std::int32_t>(x.size()));
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (f32_bits(y[i]) != f32_bits(kernel_exp(x[i])) && mismatches++ == 0) first = i;
  INFO("first mismatch: x=", x[first], " batch=", y[first], " scalar=", kernel_exp(x[first]));
  CHECK(mismatches == 0);
}

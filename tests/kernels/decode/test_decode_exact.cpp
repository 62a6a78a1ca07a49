// Exact precision of V1 and V2 against an independent dense fp64 formulation, and V1 against V2.
#include <doctest/doctest.h>

#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/dense_reference.hpp"
#include "support/lowp_reference.hpp"
#include "support/tuning.hpp"

using namespace pao;

TEST_CASE("exact V1 equals a dense fp64 attention to 1e-12 relative") {
  for (const auto& spec : test::all_decode_cases()) {
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    const auto ref = test::dense_decode_reference(c);
    const auto got = paged_attention_v1(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    REQUIRE(got.size() == ref.size());
    const double tol = 1e-12 * test::max_abs(ref);
    CHECK(test::max_abs_diff(got, ref) <= tol);
  }
}

TEST_CASE("exact V1 and V2 with per-KV-head fp8 scales equal the dense fp64 attention") {
  for (DType cache : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    cases::Case spec = test::attention_case(8, 4, 64, 16, {1, 37, 90});
    spec.partition_size = 32;
    spec.kv_cache_dtype = test::kv_cache_of(cache);
    spec.seed = 41;
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    // Scales far apart, so that a kernel using another head's (or the per-tensor 1.0) fails.
    const std::vector<float> k_heads = {0.5f, 2.0f, 0.125f, 3.0f}, v_heads = {4.0f, 0.25f, 1.5f, 0.0625f};
    const auto ref = test::dense_decode_reference(c, k_heads, v_heads);
    DecodeArgs args = c.args();
    args.options.k_head_scales = k_heads;
    args.options.v_head_scales = v_heads;
    const double tol = 1e-12 * test::max_abs(ref);
    CHECK(test::max_abs_diff(paged_attention_v1(args, Precision::exact, c.spec).out_f64.to_f64(), ref) <=
          tol);
    CHECK(test::max_abs_diff(paged_attention_v2(args, Precision::exact, c.spec).out_f64.to_f64(), ref) <=
          tol);
    // The per-tensor reference differs, so the comparison above can tell the scales apart.
    CHECK(test::max_abs_diff(test::dense_decode_reference(c), ref) > 1e3 * tol);
  }
}

TEST_CASE("exact V2 agrees with exact V1 for several partition sizes") {
  for (const auto& spec : test::all_decode_cases()) {
    const cases::DecodeCase c = cases::make_decode_case(spec);
    const auto v1 = paged_attention_v1(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    const double tol = 1e-12 * test::max_abs(v1);
    for (std::int32_t parts : {1, 2, 5, 64}) {
      const KernelTuning tuning = test::partitioned(spec.block_size * parts, spec);
      INFO(test::describe(spec), " partition_size=", tuning.partition_size);
      const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::exact, tuning);
      CHECK(test::max_abs_diff(v2.out_f64.to_f64(), v1) <= tol);
    }
  }
}

TEST_CASE("exact output is the one rounding of the fp64 output") {
  for (const auto& spec : test::feature_cases()) {
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    const DecodeOutputs o = paged_attention_v2(c.args(), Precision::exact, c.spec);
    const auto f64 = o.out_f64.to_f64();
    const auto rounded = o.out.to_f64();
    for (std::size_t i = 0; i < f64.size(); ++i) REQUIRE(rounded[i] == round_to_dtype(spec.dtype, f64[i]));
  }
}

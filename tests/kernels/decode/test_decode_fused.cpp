// The fused loops (lib/src/decode_kernel_fused.*, lib/src/decode_exact_fused.*) against the
// general ones, bit for bit. The fused loops run whole blocks of the dense vLLM layouts; the NHD
// layout holds the same logical values and always takes the general loops, so the two layouts
// must agree on every output bit, in both precisions. Without AVX-512 both take the general
// loops; the test checks that and still compares the outputs.
#include <doctest/doctest.h>

#include <string>

#include "kernels/decode/decode_exact_fused.hpp"  // internal: which loops a problem takes
#include "kernels/decode/decode_kernel_fused.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/tuning.hpp"

using namespace pao;

namespace {

// The fused loops exist only in AVX-512 builds (the test is compiled with the library's flags);
// elsewhere every problem takes the general loops, and the comparisons below still run.
#if defined(__AVX512F__)
constexpr bool kFusedBuilt = true;
#else
constexpr bool kFusedBuilt = false;
#endif

bool takes_fused_loops(const cases::DecodeCase& c, const KernelTuning& cfg, DType dtype) {
  const detail::DecodeProblem p = detail::make_decode_problem(c.args());
  const auto geo = DecodeGeometry::make(cfg.warp_size, cfg.threads_per_cta, c.spec.block_size,
                                        static_cast<std::int32_t>(dtype_size(dtype)));
  return detail::fused_decode_supported(p, geo);
}

bool takes_fused_exact_loops(const cases::DecodeCase& c) {
  return detail::fused_exact_supported(detail::make_decode_problem(c.args()));
}

void check_same_outputs(const DecodeOutputs& a, const DecodeOutputs& b) {
  CHECK(test::bitwise_equal(a.out, b.out));
  CHECK(test::bitwise_equal(a.tmp_out, b.tmp_out));
  CHECK(test::bitwise_equal(a.max_logits, b.max_logits));
  CHECK(test::bitwise_equal(a.exp_sums, b.exp_sums));
}

}  // namespace

TEST_CASE("the fused loops of the vLLM layouts equal the general loops bit for bit, in both precisions") {
  struct Shape {
    std::int32_t heads, kv_heads, head_size, block_size;
  };
  // MHA, GQA with 4 and 5 heads per KV head (the fused Q·K runs 4 heads at a time, then the
  // rest), MQA; head sizes that fill 16 lanes and ones that leave a tail (80, 120); blocks 16, 32.
  const Shape shapes[] = {{4, 4, 64, 16}, {8, 2, 128, 16}, {10, 2, 80, 32}, {8, 1, 120, 16}, {6, 2, 256, 32}};
  const cases::ValueDistribution dists[] = {cases::ValueDistribution::uniform,
                                            cases::ValueDistribution::large_logits,
                                            cases::ValueDistribution::dominant_token};
  int n = 0;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (const Shape& s : shapes) {
      cases::Case spec;
      spec.num_seqs = 3;
      spec.num_heads = s.heads;
      spec.num_kv_heads = s.kv_heads;
      spec.head_size = s.head_size;
      spec.block_size = s.block_size;
      spec.dtype = dtype;
      // Whole blocks, a sequence ending mid-block (general loops for its last block), one token.
      spec.seq_lens = {4 * s.block_size, 3 * s.block_size + 5, 1};
      spec.partition_size = 2 * s.block_size;
      spec.alibi = n % 2 == 1;
      spec.soft_cap = n % 3 == 2 ? 30.0f : 0.0f;
      spec.distribution = dists[n % 3];
      spec.seed = 700 + static_cast<std::uint64_t>(n);
      ++n;
      const cases::DecodeCase vllm = cases::make_decode_case(spec);
      spec.kv_layout = KVLayout::nhd;
      const cases::DecodeCase nhd = cases::make_decode_case(spec);  // same seed: the same logical values
      for (std::int32_t warp : {32, 64}) {
        const KernelTuning cfg = test::gpu_tuning(warp, 128, spec);
        INFO(test::describe(spec), " warp=", warp);
        CHECK(takes_fused_loops(vllm, cfg, dtype) == kFusedBuilt);
        REQUIRE_FALSE(takes_fused_loops(nhd, cfg, dtype));
        check_same_outputs(paged_attention_v2(vllm.args(), Precision::kernel, cfg),
                           paged_attention_v2(nhd.args(), Precision::kernel, cfg));
        CHECK(test::bitwise_equal(paged_attention_v1(vllm.args(), Precision::kernel, cfg).out,
                                  paged_attention_v1(nhd.args(), Precision::kernel, cfg).out));
      }
      INFO(test::describe(spec), " exact");
      CHECK(takes_fused_exact_loops(vllm) == (kFusedBuilt && dtype != DType::f32));
      REQUIRE_FALSE(takes_fused_exact_loops(nhd));
      const DecodeOutputs a = paged_attention_v2(vllm.args(), Precision::exact, vllm.spec);
      const DecodeOutputs b = paged_attention_v2(nhd.args(), Precision::exact, nhd.spec);
      check_same_outputs(a, b);
      CHECK(test::bitwise_equal(a.out_f64, b.out_f64));
    }
}

TEST_CASE("fp8 caches and blocks of 8 take the general loops") {
  cases::Case spec;
  spec.num_heads = 4;
  spec.head_size = 64;
  spec.seq_lens = {40};
  spec.kv_cache_dtype = DType::fp8_e4m3;
  CHECK_FALSE(takes_fused_loops(cases::make_decode_case(spec), KernelTuning{}, spec.dtype));
  CHECK_FALSE(takes_fused_exact_loops(cases::make_decode_case(spec)));
  spec.kv_cache_dtype = std::nullopt;
  spec.block_size = 8;
  CHECK_FALSE(takes_fused_loops(cases::make_decode_case(spec), KernelTuning{}, spec.dtype));
  CHECK_FALSE(takes_fused_exact_loops(cases::make_decode_case(spec)));
}

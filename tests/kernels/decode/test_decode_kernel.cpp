// Kernel precision of V1, V2 and the reduce: its error bound against the exact precision,
// the structural identities it must satisfy bit for bit, and determinism across thread counts.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/lowp_reference.hpp"
#include "support/tuning.hpp"

using namespace pao;

TEST_CASE("kernel precision is within twice a plain low-precision implementation's error") {
  // FlashAttention's rule: |kernel - exact| <= 2 |lowp - exact| + floor, where lowp is the
  // PyTorch-style reference and the floor is a few units of roundoff of the output dtype plus
  // the kernel's own guard: it divides by exp_sum + 1e-6 with exp_sum >= 1, a relative bias of
  // at most 1e-6 (visible in f32 outputs only).
  for (const auto& spec : test::all_decode_cases()) {
    const cases::DecodeCase c = cases::make_decode_case(spec);
    const auto exact = paged_attention_v1(c.args(), Precision::exact, c.spec).out_f64.to_f64();
    const auto lowp = test::lowp_decode_reference(c);
    const double floor = (4 * unit_roundoff(spec.dtype) + 1e-6) * std::max(1e-3, test::max_abs(exact));
    const double bound = 2 * test::max_abs_diff(lowp, exact) + floor;
    INFO(test::describe(spec));
    REQUIRE(std::isfinite(bound));  // a NaN in the references would make any bound pass
    for (std::int32_t warp : {32, 64}) {
      const KernelTuning cfg = test::gpu_tuning(warp, 128, spec);
      const auto v1 = paged_attention_v1(c.args(), Precision::kernel, cfg).out.to_f64();
      const auto v2 = paged_attention_v2(c.args(), Precision::kernel, cfg).out.to_f64();
      INFO(test::describe(spec), " warp=", warp, " bound=", bound);
      CHECK(test::max_abs_diff(v1, exact) <= bound);
      CHECK(test::max_abs_diff(v2, exact) <= bound);
    }
  }
}

TEST_CASE("kernel V2 with one partition is bit-identical to kernel V1") {
  for (const auto& spec : test::all_decode_cases()) {
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    std::int32_t longest = 0;
    for (auto l : spec.seq_lens) longest = std::max(longest, l);
    const KernelTuning one = test::partitioned(
        ((std::max(longest, spec.max_seq_len) + spec.block_size) / spec.block_size) * spec.block_size, spec);
    const DecodeOutputs v1 = paged_attention_v1(c.args(), Precision::kernel, one);
    const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::kernel, one);
    CHECK(v2.max_logits.size(2) == 1);
    CHECK(test::bitwise_equal(v1.out, v2.out));
  }
}

TEST_CASE("the standalone reduce reproduces V2's output from V2's partials") {
  for (const auto& spec : test::all_decode_cases()) {
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    for (Precision prec : {Precision::kernel, Precision::exact}) {
      const DecodeOutputs v2 = paged_attention_v2(c.args(), prec, c.spec);
      const ReduceArgs r{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
      const DecodeOutputs red = paged_attention_v2_reduce(r, prec, c.spec);
      if (prec == Precision::kernel) {
        CHECK(test::bitwise_equal(red.out, v2.out));
      } else {
        // The exact reduce of the stored (rounded) partials differs from the fp64 reduce of the
        // fp64 partials by at most the partials' rounding.
        const auto a = red.out_f64.to_f64();
        const auto b = v2.out_f64.to_f64();
        CHECK(test::max_abs_diff(a, b) <= 2 * unit_roundoff(spec.dtype) * std::max(1e-30, test::max_abs(b)));
      }
    }
  }
}

TEST_CASE("outputs are bit-identical for 1, 2 and 3 threads") {
  const auto cases = test::feature_cases();
  for (std::size_t i = 0; i < cases.size(); i += 3) {
    const auto& spec = cases[i];
    INFO(test::describe(spec));
    const cases::DecodeCase c = cases::make_decode_case(spec);
    std::vector<DecodeOutputs> runs;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      for (Precision prec : {Precision::kernel, Precision::exact})
        runs.push_back(paged_attention_v2(c.args(), prec, c.spec));
    }
    omp_set_num_threads(2);
    for (std::size_t r = 2; r < runs.size(); ++r) {
      const DecodeOutputs& a = runs[r % 2];
      const DecodeOutputs& b = runs[r];
      CHECK(test::bitwise_equal(a.out, b.out));
      CHECK(test::bitwise_equal(a.tmp_out, b.tmp_out));
      CHECK(test::bitwise_equal(a.max_logits, b.max_logits));
      CHECK(test::bitwise_equal(a.exp_sums, b.exp_sums));
    }
  }
}

TEST_CASE("every warp size and CTA size: one-partition V2 equals V1, the reduce reproduces V2") {
  // warp 32 and 64 (NVIDIA, BI-V100) x 64, 128 and 256 threads per CTA: the cross-warp trees
  // of the softmax sum, the P·V rows and the reduce change with each. Sequences longer than 256
  // tokens wrap the per-thread softmax sums; 75 partitions (of one block each) wrap the reduce's
  // per-thread sums at 64 threads and fill more than two warps of 32.
  const std::pair<std::int32_t, std::int32_t> configs[] = {{32, 64}, {32, 128}, {32, 256},
                                                           {64, 64}, {64, 128}, {64, 256}};
  int n = 0;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    const std::int32_t block_size = n == 1 ? 8 : 16;
    cases::Case spec = test::attention_case(4, 2, 64, block_size, {0, 1, 37, 75 * block_size});
    spec.dtype = dtype;
    spec.partition_size = spec.block_size;
    spec.alibi = n == 2;
    spec.distribution = n == 0 ? cases::ValueDistribution::large_logits : cases::ValueDistribution::uniform;
    spec.seed = 900 + static_cast<std::uint64_t>(n++);
    const cases::DecodeCase c = cases::make_decode_case(spec);
    for (const auto& [warp, threads] : configs) {
      const KernelTuning cfg = test::gpu_tuning(warp, threads, spec);
      const KernelTuning one = test::partitioned(76 * spec.block_size, cfg);  // > every length: one partition
      INFO(test::describe(spec), " warp=", cfg.warp_size, " threads=", cfg.threads_per_cta);
      const DecodeOutputs v1 = paged_attention_v1(c.args(), Precision::kernel, cfg);
      const DecodeOutputs v2_one = paged_attention_v2(c.args(), Precision::kernel, one);
      REQUIRE(v2_one.max_logits.size(2) == 1);
      CHECK(test::bitwise_equal(v1.out, v2_one.out));

      const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::kernel, cfg);
      REQUIRE(v2.max_logits.size(2) == 75);
      const ReduceArgs r{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
      CHECK(test::bitwise_equal(paged_attention_v2_reduce(r, Precision::kernel, cfg).out, v2.out));
    }
  }
}

// The standalone V2 reduce (paged_attention_v2_reduce) on caller-given partials: its input
// checks (each pao::Error names the tensor and the rule, and the tuning follows the rules of
// the V1/V2 entry points), and that it never reads the partials of partitions at or past a
// sequence's end, whatever they hold.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/expect_error.hpp"
#include "support/tuning.hpp"

using namespace pao;

namespace {

// Two sequences of 20 and 5 tokens, partitions of 16 and max_seq_len 64: 4 partitions, of
// which sequence 0 uses 2 and sequence 1 uses 1.
cases::Case reduce_spec() {
  cases::Case s = test::two_short_sequences();
  s.max_seq_len = 64;
  s.partition_size = 16;
  s.seed = 31;
  return s;
}

void expect_reduce_error(const ReduceArgs& args, const std::string& fragment,
                         Precision prec = Precision::kernel, const KernelTuning& cfg = reduce_spec()) {
  test::expect_error_from([&] { return paged_attention_v2_reduce(args, prec, cfg); }, fragment);
}

}  // namespace

TEST_CASE("the standalone reduce checks the tuning with the V1/V2 rules") {
  const cases::DecodeCase c = cases::make_decode_case(reduce_spec());
  const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::kernel, c.spec);
  const ReduceArgs r{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
  CHECK_NOTHROW(paged_attention_v2_reduce(r, Precision::kernel, c.spec));
  // The same configs, the same messages as the V1/V2 entry points.
  for (const KernelTuning& bad : {test::gpu_tuning(48, 96, c.spec), test::gpu_tuning(48, 128, c.spec),
                                  test::gpu_tuning(0, 128, c.spec)}) {
    expect_reduce_error(r, "kernel precision: warp_size = ", Precision::kernel, bad);
    CHECK_THROWS_WITH_AS(paged_attention_v2(c.args(), Precision::kernel, bad),
                         doctest::Contains("(supported: 32, 64)"), Error);
    CHECK_THROWS_WITH_AS(paged_attention_v2_reduce(r, Precision::kernel, bad),
                         doctest::Contains("(supported: 32, 64)"), Error);
  }
  expect_reduce_error(r, "kernel precision: warp_size = 48 (supported: 32, 64)", Precision::kernel,
                      test::gpu_tuning(48, 96, c.spec));
  expect_reduce_error(r,
                      "kernel precision: threads_per_cta = 96 must be a power-of-two number of warps of 32",
                      Precision::kernel, test::gpu_tuning(32, 96, c.spec));
  expect_reduce_error(r,
                      "kernel precision: threads_per_cta = 32 must be a power-of-two number of warps of 64",
                      Precision::kernel, test::gpu_tuning(64, 32, c.spec));
  expect_reduce_error(r, "kernel precision: threads_per_cta = 0 must be a power-of-two number of warps of 32",
                      Precision::kernel, test::gpu_tuning(32, 0, c.spec));
  CHECK_THROWS_WITH_AS(
      paged_attention_v1(c.args(), Precision::kernel, test::gpu_tuning(32, 96, c.spec)),
      doctest::Contains(
          "kernel precision: threads_per_cta = 96 must be a power-of-two number of warps of 32"),
      Error);
  for (const KernelTuning& good : {test::gpu_tuning(32, 32, c.spec), test::gpu_tuning(64, 64, c.spec),
                                   test::gpu_tuning(32, 512, c.spec)})
    CHECK_NOTHROW(paged_attention_v2_reduce(r, Precision::kernel, good));
}

TEST_CASE("the standalone reduce's input errors name the tensor and the rule") {
  const cases::DecodeCase c = cases::make_decode_case(reduce_spec());
  const DecodeOutputs v2 = paged_attention_v2(c.args(), Precision::kernel, c.spec);
  const ReduceArgs good{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
  REQUIRE(v2.tmp_out.shape() == Shape{2, 4, 4, 32});

  // One wrong tensor at a time, and what its error says.
  struct BadInput {
    TensorView ReduceArgs::*field;
    Tensor tensor;
    std::vector<std::string> fragments;
  };
  const BadInput bad_inputs[] = {
      {&ReduceArgs::tmp_out,
       Tensor(DType::i32, {2, 4, 4, 32}),
       {"tmp_out: dtype i32, expected f32, f16 or bf16"}},
      {&ReduceArgs::tmp_out,
       Tensor(DType::f16, {2, 4, 128}),
       {"tmp_out: rank 3 with shape [2, 4, 128], expected [num_seqs, num_heads, max_num_partitions, "
        "head_size]"}},
      {&ReduceArgs::max_logits, Tensor(DType::f16, {2, 4, 4}), {"max_logits: dtype f16, expected f32"}},
      {&ReduceArgs::max_logits,
       Tensor(DType::f32, {2, 4, 3}),
       {"max_logits: shape [2, 4, 3] does not match [num_seqs, num_heads, max_num_partitions] (as tmp_out) "
        "(dim 2 should be 4)"}},
      {&ReduceArgs::exp_sums, Tensor(DType::bf16, {2, 4, 4}), {"exp_sums: dtype bf16, expected f32"}},
      {&ReduceArgs::exp_sums,
       Tensor(DType::f32, {2, 3, 4}),
       {"exp_sums: shape [2, 3, 4] does not match", "(dim 1 should be 4)"}},
      {&ReduceArgs::exp_sums, Tensor(DType::f32, {2, 16}), {"exp_sums: rank 2 with shape [2, 16]"}},
      {&ReduceArgs::seq_lens, Tensor(DType::f32, {2}), {"seq_lens: dtype f32, expected i32"}},
      {&ReduceArgs::seq_lens,
       Tensor(DType::i32, {3}),
       {"seq_lens: shape [3] does not match [num_seqs] (dim 0 should be 2)"}},
  };

  for (Precision prec : {Precision::kernel, Precision::exact}) {
    for (const BadInput& bad : bad_inputs) {
      ReduceArgs a = good;
      a.*bad.field = bad.tensor;
      for (const std::string& fragment : bad.fragments) expect_reduce_error(a, fragment, prec);
    }

    Tensor lens(DType::i32, {2});
    lens.set({0}, 20);
    lens.set({1}, -1);
    ReduceArgs a = good;
    a.seq_lens = lens;
    expect_reduce_error(a, "seq_lens[1] = -1: negative length", prec);

    expect_reduce_error(good, "partition_size = -16: must be positive", prec, test::partitioned(-16, c.spec));
    expect_reduce_error(good, "partition_size = 0: must be positive", prec, test::partitioned(0, c.spec));

    // Too few partitions: 65 tokens need 5 partitions of 16, tmp_out holds 4.
    lens.set({1}, 65);
    a = good;
    a.seq_lens = lens;
    expect_reduce_error(
        a, "seq_lens[1] = 65 needs 5 partitions of 16 but tmp_out holds max_num_partitions = 4", prec);
    // ... and 20 tokens need 5 partitions of 4.
    expect_reduce_error(good,
                        "seq_lens[0] = 20 needs 5 partitions of 4 but tmp_out holds max_num_partitions = 4",
                        prec, test::partitioned(4, c.spec));
    lens.set({1}, 64);  // exactly 4 partitions: accepted
    a = good;
    a.seq_lens = lens;
    CHECK_NOTHROW(paged_attention_v2_reduce(a, prec, c.spec));
  }
}

TEST_CASE("the standalone reduce never reads partitions past a sequence's end") {
  // Sequence lengths that end at, just past and well before partition boundaries, and one
  // empty sequence; max_seq_len leaves unused partitions for every sequence.
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    cases::Case spec = reduce_spec();
    spec.num_seqs = 5;
    spec.seq_lens = {20, 5, 32, 0, 49};
    spec.max_seq_len = 128;
    spec.dtype = dtype;
    spec.distribution = cases::ValueDistribution::large_logits;
    spec.seed = 32 + static_cast<std::uint64_t>(dtype);
    const cases::DecodeCase c = cases::make_decode_case(spec);
    for (Precision prec : {Precision::kernel, Precision::exact}) {
      for (const KernelTuning& cfg : {test::gpu_tuning(32, 128, spec), test::gpu_tuning(64, 256, spec)}) {
        INFO(test::describe(spec), " warp=", cfg.warp_size, " threads=", cfg.threads_per_cta,
             " exact=", prec == Precision::exact);
        const DecodeOutputs v2 = paged_attention_v2(c.args(), prec, cfg);
        const std::int64_t P = v2.max_logits.size(2);
        REQUIRE(P == 8);
        const ReduceArgs clean{v2.tmp_out, v2.max_logits, v2.exp_sums, c.seq_lens};
        const DecodeOutputs ref = paged_attention_v2_reduce(clean, prec, cfg);

        // Garbage in every partition at or past each sequence's end: NaN, +inf and huge values,
        // which would win the max or poison the sums if read.
        Tensor tmp = Tensor::copy_of(v2.tmp_out), mx = Tensor::copy_of(v2.max_logits),
               sm = Tensor::copy_of(v2.exp_sums);
        std::int64_t poisoned = 0;
        for (std::int64_t s = 0; s < spec.num_seqs; ++s) {
          const std::int64_t used =
              (spec.seq_lens[static_cast<std::size_t>(s)] + spec.partition_size - 1) / spec.partition_size;
          for (std::int64_t h = 0; h < spec.num_heads; ++h)
            for (std::int64_t p = used; p < P; ++p, ++poisoned) {
              mx.set({s, h, p}, p % 2 ? kNaN : 1e30);
              sm.set({s, h, p}, p % 3 == 0 ? kInf : p % 3 == 1 ? kNaN : 1e30);
              for (std::int64_t d = 0; d < spec.head_size; ++d) tmp.set({s, h, p, d}, d % 2 ? kNaN : 1e4);
            }
        }
        REQUIRE(poisoned > 0);
        const ReduceArgs dirty{tmp, mx, sm, c.seq_lens};
        const DecodeOutputs got = paged_attention_v2_reduce(dirty, prec, cfg);
        CHECK(test::bitwise_equal(got.out, ref.out));
        if (prec == Precision::kernel) {
          CHECK(test::bitwise_equal(got.out, v2.out));  // the reduce V2 ran itself
        } else {
          CHECK(test::bitwise_equal(got.out_f64, ref.out_f64));
        }
        // The empty sequence reduces to 0.
        for (std::int64_t h = 0; h < spec.num_heads; ++h) CHECK(got.out.at({3, h, 7}) == 0.0);
      }
    }
  }
}

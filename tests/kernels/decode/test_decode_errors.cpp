// Bad decode inputs: each raises pao::Error whose message names the tensor and the rule.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "support/decode_cases.hpp"
#include "support/expect_error.hpp"
#include "support/tuning.hpp"

using namespace pao;

namespace {

cases::Case small() {
  cases::Case s = test::two_short_sequences();
  s.partition_size = 32;
  return s;
}

void expect_error(const DecodeArgs& args, const std::string& fragment, Precision prec = Precision::exact,
                  const KernelTuning& cfg = small()) {
  test::expect_error_from([&] { return paged_attention_v2(args, prec, cfg); }, fragment);
}

void expect_error_v1(const DecodeArgs& args, const std::string& fragment, Precision prec = Precision::exact,
                     const KernelTuning& cfg = small()) {
  INFO("from V1");
  test::expect_error_from([&] { return paged_attention_v1(args, prec, cfg); }, fragment);
}

/// V1 and V2 check their inputs alike: the same error from both entry points.
void expect_error_v1_and_v2(const DecodeArgs& args, const std::string& fragment,
                            Precision prec = Precision::exact, const KernelTuning& cfg = small()) {
  expect_error(args, fragment, prec, cfg);
  expect_error_v1(args, fragment, prec, cfg);
}

}  // namespace

TEST_CASE("shape, dtype and divisibility errors name the tensor and the rule") {
  const cases::DecodeCase c = cases::make_decode_case(small());
  DecodeArgs a = c.args();
  Tensor q_i32(DType::i32, {2, 4, 32});
  a.query = q_i32;
  expect_error_v1_and_v2(a, "query: dtype i32, expected f32, f16 or bf16");

  a = c.args();
  Tensor q_rank2(DType::f16, {2, 128});
  a.query = q_rank2;
  expect_error(a, "query: rank 2");

  a = c.args();
  Tensor q3(DType::f16, {2, 3, 32});
  a.query = q3;
  expect_error(a, "num_heads = 3 is not a multiple of num_kv_heads = 2");

  a = c.args();
  Tensor bad_x(DType::f16, {c.key_cache.size(0), 2, 8, 16, 4});
  a.key_cache = bad_x;
  expect_error(a, "key_cache: shape");

  a = c.args();
  Tensor v_bf16(DType::bf16, c.value_cache.shape());
  a.value_cache = v_bf16;
  expect_error_v1_and_v2(a, "value_cache: dtype bf16 differs from key_cache's f16");

  a = c.args();
  Tensor k_bf16(DType::bf16, c.key_cache.shape()), v2_bf16(DType::bf16, c.value_cache.shape());
  a.key_cache = k_bf16;
  a.value_cache = v2_bf16;
  expect_error(a, "must equal the query's (f16) or be a cache format (fp8");

  a = c.args();
  expect_error(a, "partition_size = 24 is not a positive multiple of block_size = 16", Precision::exact,
               test::partitioned(24, small()));

  a = c.args();
  Tensor slopes(DType::f32, {3});
  a.options.alibi_slopes = slopes;
  expect_error(a, "alibi_slopes: shape [3]");
}

TEST_CASE("fp8 rules: head size divisible by x = 16, positive scales") {
  cases::Case s = small();
  s.kv_cache_dtype = DType::fp8_e4m3;
  s.head_size = 32;
  cases::DecodeCase c = cases::make_decode_case(s);
  DecodeArgs a = c.args();
  a.options.k_scale = 0.0f;
  expect_error(a, "k_scale = 0: an fp8 scale must be finite and positive");
  a = c.args();
  a.options.v_head_scales = {1.0f};
  expect_error(a, "v_scale_per_head: 1 entries, expected num_kv_heads = 2");

  Tensor query(DType::f16, {2, 4, 40});
  Tensor kc(DType::fp8_e4m3, {4, 2, 2, 16, 16});
  Tensor vc(DType::fp8_e4m3, {4, 2, 40, 16});
  a = c.args();
  a.query = query;
  a.key_cache = kc;
  a.value_cache = vc;
  expect_error(a, "head_size 40 is not divisible by x = 16");
}

TEST_CASE("block tables and sequence lengths are checked where they are used") {
  const cases::DecodeCase c = cases::make_decode_case(small());
  Tensor table = Tensor::copy_of(c.block_tables);
  table.set({0, 1}, 9999);
  DecodeArgs a = c.args();
  a.block_tables = table;
  expect_error_v1_and_v2(a, "block_tables[0][1] = 9999: block id out of range");

  Tensor lens(DType::i32, {2});
  lens.set({0}, 20);
  lens.set({1}, -3);
  a = c.args();
  a.seq_lens = lens;
  expect_error(a, "seq_lens[1] = -3: negative length");
  Tensor first_negative(DType::i32, {2});
  first_negative.set({0}, -3);
  first_negative.set({1}, 5);
  a.seq_lens = first_negative;
  expect_error_v1_and_v2(a, "seq_lens[0] = -3: negative length");

  lens.set({1}, 16 * static_cast<double>(c.block_tables.size(1)) + 1);
  a.seq_lens = lens;
  expect_error(a, "exceeds the block table's capacity");

  a = c.args();
  a.max_seq_len = 10;
  expect_error_v1_and_v2(a, "seq_lens[0] = 20 exceeds max_seq_len = 10");

  Tensor lens_f32(DType::f32, {2});
  a = c.args();
  a.seq_lens = lens_f32;
  expect_error(a, "seq_lens: dtype f32, expected i32");
}

TEST_CASE("kernel precision checks its thread geometry") {
  const cases::DecodeCase c = cases::make_decode_case(small());
  expect_error_v1_and_v2(c.args(), "kernel precision: warp_size = 48 (supported: 32, 64)", Precision::kernel,
                         test::gpu_tuning(48, 128));
  expect_error_v1_and_v2(
      c.args(), "kernel precision: threads_per_cta = 96 must be a power-of-two number of warps of 32",
      Precision::kernel, test::gpu_tuning(32, 96));
  cases::Case s = small();
  s.kv_layout = KVLayout::nhd;
  s.block_size = 24;
  const cases::DecodeCase odd = cases::make_decode_case(s);
  expect_error(odd.args(), "block_size = 24: the kernel precision needs a power of two", Precision::kernel);
  CHECK_NOTHROW(paged_attention_v1(odd.args(), Precision::exact, odd.spec));
}

TEST_CASE("block_tables: a negative id in the used range, a wrong dtype or rank") {
  const cases::DecodeCase c = cases::make_decode_case(small());
  // Sequence 0 (20 tokens) uses columns 0 and 1, sequence 1 (5 tokens) column 0.
  Tensor table = Tensor::copy_of(c.block_tables);
  table.set({0, 1}, -1);
  DecodeArgs a = c.args();
  a.block_tables = table;
  const std::string range = "[0, " + std::to_string(c.key_cache.size(0)) + ") of key_cache";
  for (Precision prec : {Precision::exact, Precision::kernel})
    expect_error_v1_and_v2(a, "block_tables[0][1] = -1: block id out of range " + range, prec);
  table = Tensor::copy_of(c.block_tables);
  table.set({1, 0}, -7);
  a.block_tables = table;
  expect_error(a, "block_tables[1][0] = -7: block id out of range");
  // The same id one column past sequence 1's last block is never read.
  table = Tensor::copy_of(c.block_tables);
  table.set({1, 1}, -7);
  a.block_tables = table;
  CHECK_NOTHROW(paged_attention_v2(a, Precision::exact, c.spec));
  CHECK_NOTHROW(paged_attention_v1(a, Precision::kernel, c.spec));

  const std::int64_t cols = c.block_tables.size(1);
  Tensor table_i64(DType::i64, {2, cols});
  a = c.args();
  a.block_tables = table_i64;
  expect_error(a, "block_tables: dtype i64, expected i32");
  Tensor table_f32(DType::f32, {2, cols});
  a.block_tables = table_f32;
  expect_error_v1(a, "block_tables: dtype f32, expected i32");

  Tensor table_rank1(DType::i32, {2 * cols});
  a.block_tables = table_rank1;
  expect_error(a, "block_tables: rank 1 with shape");
  expect_error(a, "expected [num_seqs, max_num_blocks_per_seq]");
  Tensor table_rank3(DType::i32, {2, cols, 1});
  a.block_tables = table_rank3;
  expect_error_v1(a, "block_tables: rank 3 with shape [2, " + std::to_string(cols) + ", 1]");
  Tensor table_rows(DType::i32, {3, cols});
  a.block_tables = table_rows;
  expect_error(a, "block_tables: shape [3, " + std::to_string(cols) + "] does not match");
  expect_error(a, "(dim 0 should be 2)");
}

TEST_CASE("negative partition_size and max_seq_len are rejected") {
  const cases::DecodeCase c = cases::make_decode_case(small());
  DecodeArgs a = c.args();
  for (Precision prec : {Precision::exact, Precision::kernel})
    expect_error(a, "partition_size = -32 is not a positive multiple of block_size = 16", prec,
                 test::partitioned(-32, small()));
  expect_error(a, "partition_size = 0 is not a positive multiple of block_size = 16", Precision::exact,
               test::partitioned(0, small()));
  // V1 has no partitions: partition_size is not read.
  CHECK_NOTHROW(paged_attention_v1(a, Precision::kernel, test::partitioned(-32, small())));

  a = c.args();
  a.max_seq_len = -1;
  for (Precision prec : {Precision::exact, Precision::kernel})
    expect_error_v1_and_v2(a, "max_seq_len = -1: must be >= 0 (0 = longest seq_len)", prec);
}

TEST_CASE("integer caches: missing or misshapen scales, a bad scale or zero point of a used token") {
  cases::Case s = small();
  s.kv_cache_dtype = DType::u8;  // key by channel, value by token
  s.kv_layout = KVLayout::nhd;
  const cases::DecodeCase c = cases::make_decode_case(s);
  {
    DecodeArgs a = c.args();
    a.options.kv_quant.key_scale = {};
    expect_error_v1_and_v2(a, "key_cache_scale: missing (a u8 cache needs [");
  }
  {
    DecodeArgs a = c.args();
    a.options.kv_quant.value_zero_point =
        c.quant.key_zero_point.view();  // [nb, 2, 1, 32], not [nb, 2, 16, 1]
    expect_error_v1_and_v2(a, "value_cache_zero_point: shape [");
    expect_error(a, "= [num_blocks, num_kv_heads, block_size, 1] (value by_token)");
  }
  {
    DecodeArgs a = c.args();
    const Tensor f16_scale = Tensor::filled(DType::f16, c.quant.value_scale.shape(), 1.0);
    a.options.kv_quant.value_scale = f16_scale.view();  // the spec says f32
    expect_error_v1_and_v2(a, "value_cache_scale: dtype f16, expected f32 (kv_quant's scale_dtype)");
    DecodeArgs b = c.args();
    TensorView& v = b.options.kv_quant.value_scale;  // [nb, 2, 16, 1] read heads-minor: a transposed view
    v = TensorView(v.data, v.dtype, v.shape, {v.strides[0], 1, 2, 1});
    expect_error(b, "value_cache_scale: strides");
  }
  // Sequence 1 (5 tokens) position 3: its value scale NaN, then its zero point 300.
  const std::int64_t block = c.block_tables.view().i32_at({1, 0});
  for (const bool zero_point : {false, true}) {
    cases::DecodeCase bad = cases::make_decode_case(s);
    Tensor& t = bad.quant.param(CacheTensor::value, zero_point);
    t.set({block, 0, 3, 0}, zero_point ? 300.0 : std::numeric_limits<double>::quiet_NaN());
    expect_error_v1_and_v2(bad.args(),
                           zero_point ? "value_cache_zero_point element" : "value_cache_scale element");
    expect_error(bad.args(), "(sequence 1, position 3)");
    expect_error(bad.args(), zero_point ? "a zero point must be an integer in u8's range [0, 255]"
                                        : "a scale must be finite and positive");
  }
  // A NaN scale of a slot no token occupies (the poison) is never read.
  cases::DecodeCase poisoned = cases::make_decode_case(s);
  poisoned.quant.param(CacheTensor::value, false)
      .set({block, 0, 7, 0}, std::numeric_limits<double>::quiet_NaN());
  CHECK_NOTHROW(paged_attention_v2(poisoned.args(), Precision::exact, small()));
}

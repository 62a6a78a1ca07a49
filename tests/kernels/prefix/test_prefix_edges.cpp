// Edge cases of the prefix kernel: sequences are independent (an empty query in the middle of a
// batch, a batch of one), NaN poison in every slot the kernel must not read, block-table entries
// past the context, empty batches, strided inputs, a grid larger than needed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "pao/kernels/prefix_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/prefix_cases.hpp"

using namespace pao;

namespace {

/// A view of rows [begin, end) of dim 0 of `t`.
TensorView rows_of(const Tensor& t, std::int64_t begin, std::int64_t end) {
  TensorView v = t.view();
  v.data = t.bytes() + begin * v.strides[0] * static_cast<std::int64_t>(dtype_size(t.dtype()));
  v.shape[0] = end - begin;
  return v;
}

bool all_finite(const Tensor& t) {
  for (double v : t.to_f64())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("each sequence's output is that of the sequence run alone") {
  // Covers query_len 0 in the middle of a batch and a batch of one empty sequence.
  for (const auto& spec :
       {test::mixed_batch(), test::prefix_feature_cases()[3], test::prefix_grid_cases()[5]}) {
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    for (Precision prec : {Precision::kernel, Precision::exact}) {
      const Tensor batch = prefix_attention(c.args(), prec, c.spec).out;
      const std::size_t row_bytes =
          static_cast<std::size_t>(spec.num_heads * spec.head_size) * dtype_size(spec.dtype);
      for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
        const std::int32_t begin = c.query_start_loc.data<std::int32_t>()[s];
        const std::int32_t end = c.query_start_loc.data<std::int32_t>()[s + 1];
        PrefixArgs one = c.args();
        one.query = rows_of(c.query, begin, end);
        one.key = rows_of(c.key, begin, end);
        one.value = rows_of(c.value, begin, end);
        one.block_tables = rows_of(c.block_tables, s, s + 1);
        one.seq_lens = rows_of(c.seq_lens, s, s + 1);
        Tensor qsl(DType::i32, {2});
        qsl.data<std::int32_t>()[1] = end - begin;
        one.query_start_loc = qsl;
        const Tensor alone = prefix_attention(one, prec, c.spec).out;
        INFO("seq ", s, " precision ", prec == Precision::exact ? "exact" : "kernel");
        REQUIRE(alone.size(0) == end - begin);
        CHECK(std::memcmp(alone.bytes(), batch.bytes() + static_cast<std::size_t>(begin) * row_bytes,
                          static_cast<std::size_t>(end - begin) * row_bytes) == 0);
      }
    }
  }
}

TEST_CASE("NaN poison in unused and new-token cache slots does not leak") {
  // cache_new_tokens = false: the slots of the new tokens keep their NaN poison, as does every
  // slot past a sequence's end; the kernel reads new tokens from key / value only.
  for (auto spec : test::all_prefix_cases()) {
    spec.cache_new_tokens = false;
    spec.poison_unused = true;
    INFO(test::describe(spec));
    const cases::PrefixCase c = cases::make_prefix_case(spec);
    for (Precision prec : {Precision::kernel, Precision::exact}) {
      const PrefixOutputs o = prefix_attention(c.args(), prec, c.spec);
      CHECK(all_finite(o.out));
      if (prec == Precision::exact) CHECK(all_finite(o.out_f64));
    }
  }
}

TEST_CASE("block-table entries past the context are neither read nor checked") {
  cases::Case spec = test::mixed_batch();
  spec.cache_new_tokens = false;
  const cases::PrefixCase c = cases::make_prefix_case(spec);
  const PrefixOutputs want = prefix_attention(c.args(), Precision::kernel, c.spec);
  Tensor tables = Tensor::copy_of(c.block_tables);
  for (std::int32_t s = 0; s < spec.num_seqs; ++s) {
    const std::int32_t first_unused =
        (spec.context_len(static_cast<std::size_t>(s)) + spec.block_size - 1) / spec.block_size;
    for (std::int64_t b = first_unused; b < tables.size(1); ++b) tables.set({s, b}, b % 2 ? -1 : 1 << 30);
  }
  PrefixArgs args = c.args();
  args.block_tables = tables;
  CHECK(test::bitwise_equal(prefix_attention(args, Precision::kernel, c.spec).out, want.out));
}

TEST_CASE("empty batches give empty outputs") {
  cases::Case spec = test::mixed_batch();
  test::set_lengths(spec, {5, 0}, {0, 0});
  const cases::PrefixCase c = cases::make_prefix_case(spec);
  for (Precision prec : {Precision::kernel, Precision::exact}) {
    const PrefixOutputs o = prefix_attention(c.args(), prec, c.spec);
    CHECK(o.out.shape() == Shape{0, spec.num_heads, spec.head_size});
  }
  PrefixArgs none = c.args();
  Tensor no_lens(DType::i32, {0}), qsl(DType::i32, {1});
  Tensor no_tables(DType::i32, {0, 1});
  none.seq_lens = no_lens;
  none.query_start_loc = qsl;
  none.block_tables = no_tables;
  CHECK(prefix_attention(none, Precision::kernel, c.spec).out.shape() ==
        Shape{0, spec.num_heads, spec.head_size});
}

TEST_CASE("strided query, key and value views give the same bits") {
  const cases::Case spec = test::prefix_feature_cases()[1];
  const cases::PrefixCase c = cases::make_prefix_case(spec);
  // Copies whose last dimension is padded, read through views of the first head_size columns.
  auto padded = [](const Tensor& t) {
    Tensor p(t.dtype(), {t.size(0), t.size(1), t.size(2) + 8});
    for (std::int64_t i = 0; i < t.size(0); ++i)
      for (std::int64_t h = 0; h < t.size(1); ++h)
        for (std::int64_t d = 0; d < t.size(2); ++d) p.set({i, h, d}, t.at({i, h, d}));
    return p;
  };
  const Tensor q = padded(c.query), k = padded(c.key), v = padded(c.value);
  auto narrow = [&](const Tensor& p) {
    return TensorView(p.bytes(), p.dtype(), {p.size(0), p.size(1), spec.head_size}, p.view().strides);
  };
  PrefixArgs args = c.args();
  args.query = narrow(q);
  args.key = narrow(k);
  args.value = narrow(v);
  for (Precision prec : {Precision::kernel, Precision::exact})
    CHECK(test::bitwise_equal(prefix_attention(args, prec, c.spec).out,
                              prefix_attention(c.args(), prec, c.spec).out));
  // A transposed-dims view (dim stride != 1) takes the element-wise path.
  Tensor qt(c.query.dtype(), {c.query.size(0), spec.head_size, spec.num_heads});
  for (std::int64_t i = 0; i < qt.size(0); ++i)
    for (std::int64_t h = 0; h < spec.num_heads; ++h)
      for (std::int64_t d = 0; d < spec.head_size; ++d) qt.set({i, d, h}, c.query.at({i, h, d}));
  args = c.args();
  args.query = TensorView(qt.bytes(), qt.dtype(), {qt.size(0), spec.num_heads, spec.head_size},
                          {qt.view().strides[0], 1, spec.num_heads});
  CHECK(test::bitwise_equal(prefix_attention(args, Precision::kernel, c.spec).out,
                            prefix_attention(c.args(), Precision::kernel, c.spec).out));
}

TEST_CASE("a grid larger than the longest query changes nothing") {
  const cases::PrefixCase c = cases::make_prefix_case(test::mixed_batch());
  PrefixArgs args = c.args();
  args.max_query_len = 500;
  for (Precision prec : {Precision::kernel, Precision::exact})
    CHECK(test::bitwise_equal(prefix_attention(args, prec, c.spec).out,
                              prefix_attention(c.args(), prec, c.spec).out));
}

TEST_CASE("a sliding window longer than every sequence changes nothing") {
  const cases::PrefixCase c = cases::make_prefix_case(test::mixed_batch());
  for (std::int32_t window : {87, 1 << 30, 2147483647}) {
    PrefixArgs args = c.args();
    args.options.sliding_window = window;
    INFO("window=", window);
    for (Precision prec : {Precision::kernel, Precision::exact})
      CHECK(test::bitwise_equal(prefix_attention(args, prec, c.spec).out,
                                prefix_attention(c.args(), prec, c.spec).out));
  }
}

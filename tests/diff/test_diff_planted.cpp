// Planted bugs in a copy of a golden — one partition's tmp_out scaled, one head permuted, the
// last block of a sequence dropped, a NaN in one element — make `pao diff` fail with the right
// location and pattern; a correct "vendor" (the oracle's own kernel precision) passes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "pao/cases/case_tensors.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/run.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/numerics/element.hpp"
#include "support/golden_on_disk.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

using TempDir = test::TempDir;

/// DiffOptions with --reduce.
DiffOptions with_reduce() {
  DiffOptions o;
  o.reduce = true;
  return o;
}

// 3 sequences of 3, 2 and 4 partitions of 64 tokens; 4 query heads on 2 KV heads.
const char* kCase = R"({"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "block_size": 16, "dtype": "f16",
                        "partition_size": 64, "seq_lens": [150, 70, 230], "seed": 7})";

struct Fixture : test::GoldenOnDisk {
  Fixture() : GoldenOnDisk(cases::parse_case(kCase, "planted")) {}
  const cases::Case& c = g.golden_case;

  using GoldenOnDisk::diff;
  /// `actual` through pao diff, in a file of its own.
  CaseReport diff(const NamedTensorViews& actual, const DiffOptions& options = {}) const {
    static std::atomic<int> counter{0};
    return diff(actual, "actual" + std::to_string(counter++), options);
  }
};

const TensorReport& tensor(const CaseReport& r, const std::string& name) {
  return test::GoldenOnDisk::tensor(r, name);
}

}  // namespace

TEST_CASE("a correct vendor (the oracle's kernel precision) passes") {
  Fixture f;
  const CaseReport r = f.diff({{"out", f.g.find("v2.out")->view()},
                               {"v1.out", f.g.find("v1.out")->view()},
                               {"v2.out", f.g.find("v2.out")->view()},
                               {"tmp_out", f.g.find("v2.tmp_out")->view()},  // vLLM's names work too
                               {"max_logits", f.g.find("v2.max_logits")->view()},
                               {"exp_sums", f.g.find("v2.exp_sums")->view()}},
                              with_reduce());
  CHECK(r.passed());
  CHECK(r.tensors.size() == 7);  // six outputs and the oracle's reduce of the partials
  // paged_attention_v2's own argument name for exp_sums is exp_sum: it must be compared, not ignored.
  CHECK(canonical_output_name("exp_sum", cases::CaseKernel::decode) == "v2.exp_sums");
  CHECK(canonical_output_name("exp_sum", cases::CaseKernel::prefix).empty());
  CHECK(canonical_output_name("o", cases::CaseKernel::prefix) == "out");  // context_attention_fwd's
  CHECK(r.passed_count() == 7);
  CHECK(tensor(r, "v2.tmp_out").excluded == 3 * 4 * 32);  // seq 0 partition 3, seq 1 partitions 2 and 3
  CHECK(tensor(r, "v2.tmp_out").compared == 9 * 4 * 32);
  CHECK(r.reduce_verdict.find("agree") != std::string::npos);
  // Garbage where vendors write nothing (partitions past a sequence's end) does not matter.
  Tensor tmp = f.copy("v2.tmp_out");
  tmp.set({1, 0, 3, 0}, std::numeric_limits<double>::quiet_NaN());
  const CaseReport garbage = f.diff({{"v2.tmp_out", tmp}});
  CHECK(tensor(garbage, "v2.tmp_out").passed);
  CHECK_FALSE(garbage.passed());  // no final output: the case itself is not a pass
  // The golden against itself passes (its `out` is the exact output rounded).
  CHECK(diff_case(f.golden_path, f.golden_path, {}).passed());
}

TEST_CASE("a scaled partition of tmp_out: whole-partition at that partition") {
  Fixture f;
  Tensor tmp = f.copy("v2.tmp_out");
  for (std::int64_t s = 0; s < 3; ++s)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t d = 0; d < 32; ++d) tmp.set({s, h, 1, d}, 1.5 * tmp.at({s, h, 1, d}));
  const CaseReport r = f.diff({{"v2.tmp_out", tmp},
                               {"v2.max_logits", f.g.find("v2.max_logits")->view()},
                               {"v2.exp_sums", f.g.find("v2.exp_sums")->view()},
                               {"v2.out", f.g.find("v2.out")->view()}},
                              with_reduce());
  const TensorReport& t = tensor(r, "v2.tmp_out");
  CHECK_FALSE(t.passed);
  CHECK(t.verdict.pattern == Pattern::whole_partition);
  REQUIRE(t.worst_abs.has_value());
  CHECK(t.worst_abs->location.coords.partition == 1);
  CHECK(t.worst_abs->location.token_begin == 64);
  CHECK(t.worst_abs->location.block_begin == 4);  // tokens 64.. are in logical block 4 on
  CHECK(t.per_partition[1].mismatched > 0);
  CHECK(t.per_partition[0].mismatched == 0);
  CHECK(tensor(r, "v2.out").passed);
  CHECK(tensor(r, "v2.max_logits").passed);
  // The oracle's reduce of the bad partials fails too: the partial kernel is to blame.
  CHECK_FALSE(tensor(r, kReduceName).passed);
  CHECK(r.reduce_verdict.find("partial-kernel bug") != std::string::npos);
}

TEST_CASE("good partials and a bad v2.out: a reduce-kernel bug") {
  Fixture f;
  Tensor out = f.copy("v2.out");
  out.set({0, 0, 0}, out.at({0, 0, 0}) + 0.25);
  const CaseReport r = f.diff({{"v2.tmp_out", f.g.find("v2.tmp_out")->view()},
                               {"v2.max_logits", f.g.find("v2.max_logits")->view()},
                               {"v2.exp_sums", f.g.find("v2.exp_sums")->view()},
                               {"v2.out", out}},
                              with_reduce());
  CHECK_FALSE(tensor(r, "v2.out").passed);
  CHECK(tensor(r, "v2.out").mismatched == 1);
  CHECK(tensor(r, kReduceName).passed);
  CHECK(r.reduce_verdict.find("reduce-kernel bug") != std::string::npos);
}

TEST_CASE("two heads of different KV heads swapped: whole-head at the swapped heads") {
  Fixture f;
  // Heads 1 and 3 read KV heads 0 and 1; swapping their outputs matches no structure of the case
  // (not whole KV groups, not the heads head % num_kv_heads maps elsewhere: 1 and 2).
  Tensor out = f.copy("v2.out");
  for (std::int64_t s = 0; s < 3; ++s)
    for (std::int64_t d = 0; d < 32; ++d) {
      const double a = out.at({s, 1, d}), b = out.at({s, 3, d});
      out.set({s, 1, d}, b);
      out.set({s, 3, d}, a);
    }
  const CaseReport r = f.diff({{"out", out}});
  const TensorReport& t = tensor(r, "out");
  CHECK_FALSE(t.passed);
  CHECK(t.verdict.pattern == Pattern::whole_head);
  CHECK(t.verdict.detail.find("heads 1, 3") != std::string::npos);
  REQUIRE(t.worst_abs.has_value());
  const auto head = t.worst_abs->location.coords.head;
  CHECK((head == 1 || head == 3));
  CHECK(t.per_head[0].mismatched == 0);
  CHECK(t.per_head[2].mismatched == 0);
}

TEST_CASE("the last block of a sequence dropped: sequence-tail at its last partition") {
  Fixture f;
  // The vendor's kernel stops one block short on sequence 2 (230 -> 224 tokens).
  const cases::DecodeCase dc = cases::make_decode_case(f.c);
  Tensor short_lens = Tensor::copy_of(dc.seq_lens.view());
  short_lens.set({2}, 224);
  DecodeArgs args = dc.args();
  args.seq_lens = short_lens;
  args.max_seq_len = 230;
  const DecodeOutputs vendor = paged_attention_v2(args, Precision::kernel, f.c);
  const CaseReport r = f.diff({{"v2.tmp_out", vendor.tmp_out},
                               {"v2.max_logits", vendor.max_logits},
                               {"v2.exp_sums", vendor.exp_sums},
                               {"v2.out", vendor.out}});
  const TensorReport& tmp = tensor(r, "v2.tmp_out");
  CHECK_FALSE(tmp.passed);
  CHECK(tmp.verdict.pattern == Pattern::sequence_tail);
  REQUIRE(tmp.worst_abs.has_value());
  const Location& loc = tmp.worst_abs->location;
  CHECK(loc.coords.seq == 2);
  CHECK(loc.coords.partition == 3);
  CHECK(loc.token_begin == 192);
  CHECK(loc.token_end == 230);
  CHECK(loc.block_begin == 12);
  CHECK(loc.block_end == 15);
  REQUIRE(loc.physical_blocks.size() == 3);
  const auto* table = f.g.find("block_tables")->data<std::int32_t>();
  const auto columns = f.g.find("block_tables")->size(1);
  CHECK(loc.physical_blocks[2] == table[2 * columns + 14]);
  CHECK(tmp.per_seq[0].mismatched == 0);
  CHECK(tmp.per_seq[1].mismatched == 0);
  CHECK_FALSE(tensor(r, "v2.exp_sums").passed);
  CHECK(tensor(r, "v2.exp_sums").verdict.pattern == Pattern::sequence_tail);
  const TensorReport& out = tensor(r, "v2.out");
  CHECK_FALSE(out.passed);
  CHECK(out.verdict.pattern == Pattern::whole_sequence);
  CHECK(out.worst_abs->location.coords.seq == 2);
}

TEST_CASE("a NaN in one element: nan-inf at that element") {
  Fixture f;
  Tensor out = f.copy("v2.out");
  out.set({1, 3, 5}, std::numeric_limits<double>::quiet_NaN());
  const CaseReport r = f.diff({{"v1.out", out}});
  const TensorReport& t = tensor(r, "v1.out");
  CHECK_FALSE(t.passed);
  CHECK(t.mismatched == 1);
  CHECK(t.nonfinite == 1);
  CHECK(t.verdict.pattern == Pattern::nan_inf);
  REQUIRE(t.worst_abs.has_value());
  CHECK(t.worst_abs->location.coords.seq == 1);
  CHECK(t.worst_abs->location.coords.head == 3);
  CHECK(t.worst_abs->location.coords.dim == 5);
  CHECK(t.worst_abs->location.index == Shape{1, 3, 5});
  CHECK(std::isnan(t.worst_abs->actual));
}

TEST_CASE("prefix: a correct vendor passes, one wrong block of new tokens is single-block") {
  const test::GoldenOnDisk f(cases::parse_case(R"({"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2,
      "head_size": 32, "dtype": "bf16", "query_lens": [40, 3], "seq_lens": [60, 10]})",
                                               "prefix"));
  const golden::GoldenTensors& g = f.g;
  CHECK(f.diff({{"out", g.find("prefix.out")->view()}}, "good").passed());
  // Sequence 0: context 20, new tokens 0..39 at positions 20..59; block 2 holds positions 32..47
  // = new tokens 12..27. Corrupt all of them.
  Tensor out = Tensor::copy_of(g.find("prefix.out")->view());
  for (std::int64_t t = 12; t < 28; ++t)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t d = 0; d < 32; ++d) out.set({t, h, d}, out.at({t, h, d}) + 0.5);
  const CaseReport r = f.diff({{"prefix.out", out.view()}}, "bad");
  const TensorReport& t = tensor(r, "prefix.out");
  CHECK_FALSE(t.passed);
  CHECK(t.verdict.pattern == Pattern::single_block);
  CHECK(t.worst_abs->location.coords.seq == 0);
  CHECK(t.worst_abs->location.block_begin == 2);
}

// write_and_attend goldens (the cache write and the prefix attention in one call, OpenVINO's
// PagedAttention): the golden holds the caches before and after; `pao diff` judges the attention
// outputs and the written caches (an integer cache's scales and zero points too) together. A
// correct fused kernel passes; real bugs computed here fail with their tensor and pattern: a token
// not written, the attention run before the write, the new tokens attended unquantised, the scales
// left unwritten, a vendor that quantised another way (another param shape or dtype).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pao/cases/case_tensors.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/layout/openvino_cache.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "support/compare.hpp"
#include "support/expect_error.hpp"
#include "support/golden_on_disk.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

struct Fixture : test::GoldenOnDisk {
  explicit Fixture(const std::string& json) : GoldenOnDisk(cases::parse_case(json, "wa")) {}
};

/// A vendor's cache write of an activation-dtype cache, element by element on copies of the
/// golden's caches before (the stored bits of key / value); `skip_token` is left unwritten.
std::pair<Tensor, Tensor> copy_write(const Fixture& f, std::int64_t skip_token = -1) {
  const cases::Case& c = f.g.golden_case;
  std::pair<Tensor, Tensor> out{f.copy("key_cache_before"), f.copy("value_cache_before")};
  const Tensor& slots = *f.g.find("slot_mapping");
  for (const bool key : {true, false}) {
    Tensor& cache = key ? out.first : out.second;
    const Tensor& src = *f.g.find(key ? "key" : "value");
    const PagedCacheLayout layout =
        contiguous_cache_layout(c.kv_layout, key ? CacheTensor::key : CacheTensor::value, cache.shape());
    const auto es = static_cast<std::int64_t>(dtype_size(cache.dtype()));
    for (std::int64_t t = 0; t < src.size(0); ++t) {
      const auto slot = static_cast<std::int64_t>(slots.at({t}));
      if (t == skip_token) continue;
      for (std::int64_t h = 0; h < c.num_kv_heads; ++h)
        for (std::int64_t d = 0; d < c.head_size; ++d)
          std::memcpy(cache.bytes() + layout.offset(slot / c.block_size, h, slot % c.block_size, d) * es,
                      src.bytes() + src.view().offset({t, h, d}) * es, static_cast<std::size_t>(es));
    }
  }
  return out;
}

const char* kF16 = R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
    "dtype": "f16", "kv_layout": "hnd", "block_size": 16, "query_lens": [7, 19, 1], "seq_lens": [40, 19, 33],
    "seed": 4})";
const char* kU8 = R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
    "dtype": "bf16", "kv_cache_dtype": "u8", "kv_layout": "hnd", "block_size": 16,
    "kv_quant": {"key": "by_token", "value": "group_32"}, "query_lens": [7, 19, 1], "seq_lens": [40, 19, 33],
    "seed": 5})";

}  // namespace

TEST_CASE("write_and_attend golden: the caches before as inputs, after as outputs, beside the attention's") {
  Fixture f(kF16);
  CHECK(f.g.metadata.at("outputs") == "out,out_exact,write_and_attend.out,key_cache,value_cache");
  CHECK(f.g.metadata.at("inputs") ==
        "query,key,value,key_cache_before,value_cache_before,slot_mapping,block_tables,seq_lens,query_start_"
        "loc");
  // The new tokens' slots are poisoned before the write and hold the tokens after it.
  const Tensor& slots = *f.g.find("slot_mapping");
  const auto s0 = static_cast<std::int64_t>(slots.at({0}));
  CHECK(std::isnan(f.g.find("key_cache_before")->at({s0 / 16, 0, s0 % 16, 0})));
  CHECK(f.g.find("key_cache")->at({s0 / 16, 0, s0 % 16, 0}) == f.g.find("key")->at({0, 0, 0}));
  // What it computes is reshape_and_cache then context_attention_fwd: the prefix case of the same
  // lengths, whose builder writes the new tokens with the context, holds the same caches and out.
  cases::Case prefix = f.g.golden_case;
  prefix.kernel = cases::CaseKernel::prefix;
  const golden::GoldenTensors p = golden::make_golden(prefix);
  for (const char* name : {"key_cache", "value_cache", "out", "out_exact"})
    CHECK_MESSAGE(test::bitwise_equal(*f.g.find(name), *p.find(name)), name);
  CHECK(test::bitwise_equal(*f.g.find("write_and_attend.out"), *p.find("prefix.out")));
}

TEST_CASE("write_and_attend golden of an integer cache: the scales and zero points before and after") {
  Fixture f(kU8);
  CHECK(f.g.metadata.at("outputs") ==
        "out,out_exact,write_and_attend.out,key_cache,value_cache,key_cache_scale,key_cache_zero_point,"
        "value_cache_scale,value_cache_zero_point");
  REQUIRE(f.g.find("key_cache_scale_before"));
  // The prefix builder quantises each block's rows itself (cases/integer_cache.cpp); the fused
  // golden writes the new rows with reshape_and_cache: the two agree bit for bit.
  cases::Case prefix = f.g.golden_case;
  prefix.kernel = cases::CaseKernel::prefix;
  const golden::GoldenTensors p = golden::make_golden(prefix);
  for (const char* name : {"key_cache", "value_cache", "key_cache_scale", "key_cache_zero_point",
                           "value_cache_scale", "value_cache_zero_point", "out"})
    CHECK_MESSAGE(test::bitwise_equal(*f.g.find(name), *p.find(name)), name);
  // Recomputed from the inputs (pao verify --recompute, a golden written with --outputs none).
  const auto again = golden::compute_outputs(
      f.g, {"key_cache_scale", "value_cache", "value_cache_zero_point", "write_and_attend.out"});
  REQUIRE(again.size() == 4);
  for (const auto& [name, t] : again) CHECK_MESSAGE(test::bitwise_equal(t, *f.g.find(name)), name);
  CHECK(golden::check_golden_invariants(golden::TensorFile::open(f.golden_path)).ok());
}

TEST_CASE("write_and_attend: a correct fused kernel passes; each half alone fails as absent") {
  Fixture f(kF16);
  const auto caches = copy_write(f);
  const Tensor out = f.copy("out");
  const CaseReport good =
      f.diff({{"out", out.view()}, {"key_cache", caches.first.view()}, {"value_cache", caches.second.view()}},
             "good");
  CHECK(good.passed());
  CHECK(f.tensor(good, "key_cache").policy.rule == Rule::bitwise);
  CHECK(f.tensor(good, "out").passed);

  const CaseReport no_caches = f.diff({{"out", out.view()}}, "attention_only");
  CHECK_FALSE(no_caches.passed());
  CHECK(f.tensor(no_caches, "key_cache").problem.find("absent from ACTUAL") != std::string::npos);

  const CaseReport no_out =
      f.diff({{"key_cache", caches.first.view()}, {"value_cache", caches.second.view()}}, "write_only");
  CHECK_FALSE(no_out.passed());
  CHECK(f.tensor(no_out, "out").problem.find("the attention's result was not checked") != std::string::npos);
}

TEST_CASE("write_and_attend: a token not written is located in the cache") {
  Fixture f(kF16);
  const auto caches = copy_write(f, 8);  // the second sequence's second new token
  const Tensor out = f.copy("out");
  const CaseReport r =
      f.diff({{"out", out.view()}, {"key_cache", caches.first.view()}, {"value_cache", caches.second.view()}},
             "skip");
  CHECK_FALSE(r.passed());
  for (const char* name : {"key_cache", "value_cache"}) {
    const TensorReport& t = f.tensor(r, name);
    CHECK(t.verdict.pattern == Pattern::not_written);
    CHECK(t.mismatched == 2 * 64);
    CHECK(t.verdict.detail.find("token 8 (seq 1, position 1)") != std::string::npos);
  }
  CHECK(f.tensor(r, "out").passed);
}

TEST_CASE("write_and_attend: zeroed tails of the last blocks are named as such (OpenVINO's f32 prefill)") {
  Fixture f(kF16);
  auto caches = copy_write(f);
  // What OpenVINO 2026.4.1 does to an f32 value cache (docs/vendor-guide.md): every slot of a
  // sequence's last block past its length is set to 0.
  const cases::Case& c = f.g.golden_case;
  const Tensor& tables = *f.g.find("block_tables");
  const PagedCacheLayout layout =
      contiguous_cache_layout(c.kv_layout, CacheTensor::value, caches.second.shape());
  std::int64_t zeroed = 0;
  for (std::int32_t s = 0; s < c.num_seqs; ++s)
    for (std::int64_t pos = c.seq_lens[static_cast<std::size_t>(s)]; pos % c.block_size != 0;
         ++pos, ++zeroed) {
      const auto block = static_cast<std::int64_t>(tables.at({s, pos / c.block_size}));
      for (std::int64_t h = 0; h < c.num_kv_heads; ++h)
        for (std::int64_t d = 0; d < c.head_size; ++d)
          std::memset(caches.second.bytes() + layout.offset(block, h, pos % c.block_size, d) * 2, 0, 2);
    }
  const Tensor out = f.copy("out");
  const CaseReport r =
      f.diff({{"out", out.view()}, {"key_cache", caches.first.view()}, {"value_cache", caches.second.view()}},
             "tails");
  CHECK_FALSE(r.passed());
  const TensorReport& t = f.tensor(r, "value_cache");
  CHECK(t.mismatched == zeroed * 2 * 64);
  CHECK(t.verdict.pattern == Pattern::outside_slots);
  CHECK(t.verdict.detail.find("all in the unused tails of the sequences' last blocks") != std::string::npos);
  CHECK(t.verdict.detail.find("(the unused tail of seq 0's last block: position 40, past its 40 tokens)") !=
        std::string::npos);
  CHECK(r.cause_tensor == "value_cache");
}

TEST_CASE("write_and_attend: the attention run on the cache before the write fails the out") {
  // A fused kernel that reads the new tokens back from the cache (new_kv_source "cache", the
  // FlashAttention / OpenVINO order) but attends before its write lands: the poisoned slots.
  Fixture f(R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
      "dtype": "f16", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.05, "v_scale": 0.05, "new_kv_source": "cache",
      "query_lens": [7, 19], "seq_lens": [40, 19], "seed": 6})");
  cases::WriteAndAttendCase w = golden::write_and_attend_case_of(f.g);
  PrefixArgs early = w.step.args();
  early.key_cache = w.key_cache_before;
  early.value_cache = w.value_cache_before;
  const Tensor before_write = prefix_attention(early, Precision::kernel, f.g.golden_case).out;
  const CaseReport r = f.diff({{"out", before_write.view()},
                               {"key_cache", w.step.key_cache.view()},
                               {"value_cache", w.step.value_cache.view()}},
                              "early");
  CHECK_FALSE(r.passed());
  CHECK_FALSE(f.tensor(r, "out").passed);
  CHECK(f.tensor(r, "key_cache").passed);

  // The new tokens attended unquantised (from key / value) where the case reads them back from
  // the fp8 cache: a real convention difference, caught and named.
  PrefixArgs from_input = w.step.args();
  from_input.new_kv_source = NewKVSource::input;
  const Tensor unquantised = prefix_attention(from_input, Precision::kernel, f.g.golden_case).out;
  const CaseReport r2 = f.diff({{"out", unquantised.view()},
                                {"key_cache", w.step.key_cache.view()},
                                {"value_cache", w.step.value_cache.view()}},
                               "from_input");
  CHECK_FALSE(r2.passed());
  CHECK_MESSAGE(r2.cause.detail.find("the new tokens read from the other source") != std::string::npos,
                r2.cause.detail);
}

TEST_CASE("write_and_attend, integer cache: params unwritten, another quantisation, another dtype") {
  Fixture f(kU8);
  // The golden's own outputs, `replaced` by `t` (alive for the call).
  auto outputs = [&](const std::string& replaced, const Tensor& t) {
    NamedTensorViews o{{"out", f.g.find("out")->view()}};
    for (const char* name : {"key_cache", "value_cache", "key_cache_scale", "key_cache_zero_point",
                             "value_cache_scale", "value_cache_zero_point"})
      o.emplace_back(name, name == replaced ? t.view() : f.g.find(name)->view());
    return o;
  };
  CHECK(f.diff(outputs("", Tensor()), "good").passed());

  // The codes written, the scales left as they were: each new token's group fails as not written.
  const CaseReport stale =
      f.diff(outputs("value_cache_scale", *f.g.find("value_cache_scale_before")), "stale");
  CHECK_FALSE(stale.passed());
  const TensorReport& t = f.tensor(stale, "value_cache_scale");
  CHECK(t.verdict.pattern == Pattern::not_written);
  CHECK(t.mismatched == 27 * 2 * 2);  // 27 new tokens, 2 kv heads, 2 groups of 32
  CHECK(t.verdict.detail.find("token 0 -> block ") != std::string::npos);

  // A vendor that keeps its key scales per channel of a block (OpenVINO's default) where the
  // golden's kv_quant says by token: never dequantised and compared as values, the shape says so.
  const Shape s = f.g.find("key_cache_scale")->shape();
  const CaseReport other =
      f.diff(outputs("key_cache_scale", Tensor::filled(DType::f32, {s[0], s[1], 1, 64}, 0.01)), "by_channel");
  CHECK_FALSE(other.passed());
  CHECK(f.tensor(other, "key_cache_scale").problem ==
        "shape [" + std::to_string(s[0]) + ", 2, 1, 64], the golden's [" + std::to_string(s[0]) +
            ", 2, 16, 1] (kv_quant.key by_token): the vendor quantised the key cache another way (its shape "
            "is key by_channel's); its codes mean something else than the golden's");

  const CaseReport f16 = f.diff(outputs("key_cache_zero_point", Tensor::filled(DType::f16, s, 0.0)), "f16");
  CHECK(f.tensor(f16, "key_cache_zero_point").problem ==
        "dtype f16, the golden's f32 (kv_quant.zero_point_dtype)");
}

TEST_CASE("write_and_attend cases: the fields of a prefix step") {
  const cases::Case c = cases::parse_case(kF16, "wa");
  CHECK(c.kernel == cases::CaseKernel::write_and_attend);
  CHECK(c.cache_new_tokens);
  CHECK(c.id == "write_and_attend-h4x2-d64-b16-f16-auto-hnd-q7.19.1-l40.19.33-s4");
  test::expect_error_from(
      [] {
        cases::parse_case(
            R"({"kernel": "write_and_attend", "dtype": "f16", "query_lens": [3], "seq_lens": [20],
            "cache_new_tokens": false})",
            "x");
      },
      "cache_new_tokens");
}

namespace {

const char* kByChannel = R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
    "dtype": "f16", "kv_cache_dtype": "u8", "kv_layout": "hnd", "block_size": 16, "kv_quant": {"rule": "openvino"},
    "query_lens": [7, 19, 1], "seq_lens": [40, 19, 33], "seed": 7})";

/// A fused kernel that quantises each by_channel key block over the rows it writes now only (the
/// earlier tokens keep their codes): OpenVINO's path for a block with no earlier tokens, taken for
/// every block. Computed here row by row with the library's quantiser.
std::pair<Tensor, Tensor> no_requantisation(const Fixture& f, Tensor& zero_points) {
  const cases::Case& c = f.g.golden_case;
  std::pair<Tensor, Tensor> out{f.copy("key_cache_before"), f.copy("key_cache_scale_before")};
  zero_points = f.copy("key_cache_zero_point_before");
  const Tensor& key = *f.g.find("key");
  const Tensor& slots = *f.g.find("slot_mapping");
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>
      rows_of_block;  // (offset, token)
  for (std::int64_t t = 0; t < slots.size(0); ++t) {
    const auto slot = static_cast<std::int64_t>(slots.at({t}));
    rows_of_block[slot / c.block_size].emplace_back(slot % c.block_size, t);
  }
  const PagedCacheLayout layout = contiguous_cache_layout(c.kv_layout, CacheTensor::key, out.first.shape());
  for (const auto& [block, rows] : rows_of_block)
    for (std::int64_t h = 0; h < c.num_kv_heads; ++h) {
      std::vector<float> x;
      for (const auto& [offset, token] : rows)
        for (std::int64_t d = 0; d < c.head_size; ++d) x.push_back(static_cast<float>(key.at({token, h, d})));
      std::vector<QuantParams> p(static_cast<std::size_t>(c.head_size));
      std::vector<std::int32_t> codes(x.size());
      quantise_block_by_channel(x.data(), static_cast<std::int32_t>(rows.size()), c.head_size, DType::u8,
                                c.kv_quant, p.data(), codes.data());
      for (std::int64_t d = 0; d < c.head_size; ++d) {
        out.second.set({block, h, 0, d}, p[static_cast<std::size_t>(d)].scale);
        zero_points.set({block, h, 0, d}, p[static_cast<std::size_t>(d)].zero_point);
      }
      for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::int64_t d = 0; d < c.head_size; ++d)
          out.first.bytes()[layout.offset(block, h, rows[r].first, d)] = static_cast<std::byte>(
              codes[r * static_cast<std::size_t>(c.head_size) + static_cast<std::size_t>(d)]);
    }
  return out;
}

}  // namespace

TEST_CASE("write_and_attend, by_channel key: a block with earlier tokens is requantised over all of them") {
  Fixture f(kByChannel);
  CHECK(golden::check_golden_invariants(golden::TensorFile::open(f.golden_path)).ok());
  const auto again = golden::compute_outputs(f.g, {"key_cache", "key_cache_scale", "write_and_attend.out"});
  for (const auto& [name, t] : again) CHECK_MESSAGE(test::bitwise_equal(t, *f.g.find(name)), name);
  // Sequence 0 holds 33 context tokens: its third block (positions 32..47) held position 32 before
  // the write and is requantised; its new tokens dequantise within half a code step of their values.
  const cases::Case& c = f.g.golden_case;
  const auto block = static_cast<std::int64_t>(f.g.find("block_tables")->at({0, 2}));
  const Tensor& before = *f.g.find("key_cache_before");
  const Tensor& after = *f.g.find("key_cache");
  bool recoded = false;
  for (std::int64_t d = 0; d < c.head_size; ++d)
    recoded |= before.at({block, 0, 0, d}) != after.at({block, 0, 0, d});
  CHECK(recoded);
  const Tensor& scale = *f.g.find("key_cache_scale");
  const Tensor& zp = *f.g.find("key_cache_zero_point");
  const Tensor& key = *f.g.find("key");
  for (std::int64_t t = 1; t < 8; ++t)  // offsets 1..7: the first sequence's new tokens 0..6
    for (std::int64_t d = 0; d < c.head_size; ++d) {
      const double s = scale.at({block, 0, 0, d});
      const double x = (after.at({block, 0, t, d}) - zp.at({block, 0, 0, d})) * s;
      CHECK(std::fabs(x - key.at({t - 1, 0, d})) <= 0.5 * s * (1 + 1e-5));
    }

  // A kernel that does not requantise: pao names the earlier tokens left as they were.
  Tensor zero_points;
  const auto [codes, scales] = no_requantisation(f, zero_points);
  NamedTensorViews o{{"out", f.g.find("out")->view()},
                     {"key_cache", codes.view()},
                     {"value_cache", f.g.find("value_cache")->view()},
                     {"key_cache_scale", scales.view()},
                     {"key_cache_zero_point", zero_points.view()}};
  for (const char* name : {"value_cache_scale", "value_cache_zero_point"})
    o.emplace_back(name, f.g.find(name)->view());
  const CaseReport r = f.diff(o, "no_requant");
  CHECK_FALSE(r.passed());
  const TensorReport& k = f.tensor(r, "key_cache");
  CHECK_FALSE(k.passed);
  CHECK_MESSAGE(k.verdict.detail.find("not-requantised (earlier tokens kept)") != std::string::npos,
                k.verdict.detail);
  CHECK(k.verdict.detail.find("an earlier token of the requantised block at ") != std::string::npos);
  CHECK_FALSE(f.tensor(r, "key_cache_scale").passed);
  CHECK(f.tensor(r, "value_cache").passed);

  // The unused tail of a requantised block written (positions 40..47 of sequence 0, past its 40
  // tokens): named as tails, not as the block's earlier tokens.
  Tensor tails = f.copy("key_cache");
  const PagedCacheLayout kl = contiguous_cache_layout(c.kv_layout, CacheTensor::key, tails.shape());
  for (std::int64_t t = 8; t < 16; ++t)
    for (std::int64_t h = 0; h < c.num_kv_heads; ++h)
      for (std::int64_t d = 0; d < c.head_size; ++d) tails.bytes()[kl.offset(block, h, t, d)] = std::byte{0};
  NamedTensorViews o2{{"out", f.g.find("out")->view()}, {"key_cache", tails.view()}};
  for (const char* name : {"value_cache", "key_cache_scale", "key_cache_zero_point", "value_cache_scale",
                           "value_cache_zero_point"})
    o2.emplace_back(name, f.g.find(name)->view());
  const CaseReport tails_report = f.diff(o2, "tails");
  const TensorReport& kt = f.tensor(tails_report, "key_cache");
  CHECK(kt.verdict.pattern == Pattern::outside_slots);
  CHECK_MESSAGE(kt.verdict.detail.find("all in the unused tails") != std::string::npos, kt.verdict.detail);
}

TEST_CASE("OpenVINO's integer cache bytes: the named layout, round trip, and judged as codes and params") {
  // The layout by hand on one block: by token, a row is [f32 scale, f32 zero point, codes]; by
  // channel, scale[D] and zero point[D] then the code rows; u4 puts element 2i in the high nibble.
  Tensor codes(DType::u8, {1, 1, 2, 4});
  for (std::int64_t i = 0; i < 8; ++i) codes.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i + 1);
  Tensor s_tok = Tensor::filled(DType::f32, {1, 1, 2, 1}, 0.5),
         z_tok = Tensor::filled(DType::f32, {1, 1, 2, 1}, 3.0);
  const TensorQuant by_token{QuantGranularity::by_token, 0}, by_channel{QuantGranularity::by_channel, 0};
  const Tensor tok = pack_openvino_cache(codes, s_tok, z_tok, by_token, 8);
  REQUIRE(tok.shape() == Shape{1, 1, 2, 12});
  float f = 0;
  std::memcpy(&f, tok.bytes(), 4);
  CHECK(f == 0.5f);
  std::memcpy(&f, tok.bytes() + 4, 4);
  CHECK(f == 3.0f);
  CHECK(tok.data<std::uint8_t>()[8] == 1);
  CHECK(tok.data<std::uint8_t>()[12 + 8 + 3] == 8);
  Tensor s_ch = Tensor::filled(DType::f32, {1, 1, 1, 4}, 0.25),
         z_ch = Tensor::filled(DType::f32, {1, 1, 1, 4}, 1.0);
  const Tensor ch = pack_openvino_cache(codes, s_ch, z_ch, by_channel, 4);
  REQUIRE(ch.shape() == Shape{1, 1, 16 + 2, 2});         // 32 param bytes as rows of 2, then 2 code rows
  CHECK(ch.data<std::uint8_t>()[32] == ((1 << 4) | 2));  // codes 1, 2: element 0 in the high nibble
  const SplitIntegerCache back = unpack_openvino_cache(ch, by_channel, 4, 4, 2, "key_cache");
  CHECK(test::bitwise_equal(back.codes, codes));
  CHECK(test::bitwise_equal(back.scale, s_ch));
  CHECK(test::bitwise_equal(back.zero_point, z_ch));
  test::expect_error_from([&] { unpack_openvino_cache(tok, by_channel, 8, 4, 2, "key_cache"); },
                          "key_cache: shape [1, 1, 2, 12], OpenVINO's by_channel layout is [1, 1, 10, 4]");

  // A fused kernel that hands over its caches in OpenVINO's bytes (u4, key by channel, HND blocks of
  // 16): judged as codes, scales and zero points; the nibbles swapped fail on the codes only.
  Fixture fx(R"({"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
      "dtype": "f16", "kv_cache_dtype": "u4", "kv_layout": "hnd", "block_size": 16, "kv_quant": {"rule": "openvino"},
      "query_lens": [7, 19], "seq_lens": [40, 19], "seed": 8})");
  const cases::Case& c = fx.g.golden_case;
  auto bytes_of = [&](CacheTensor t) {
    const std::string name = t == CacheTensor::key ? "key_cache" : "value_cache";
    return pack_openvino_cache(*fx.g.find(name), *fx.g.find(std::string(quant_param_name(t, false))),
                               *fx.g.find(std::string(quant_param_name(t, true))), c.kv_quant.of(t), 4);
  };
  Tensor k = bytes_of(CacheTensor::key), v = bytes_of(CacheTensor::value);
  const CaseReport good = fx.diff(
      {{"out", fx.g.find("out")->view()}, {"key_cache", k.view()}, {"value_cache", v.view()}}, "ov_bytes");
  CHECK(good.passed());
  CHECK(good.tensors.size() == 7);  // out, both caches, four param tensors
  CHECK(std::any_of(good.notes.begin(), good.notes.end(), [](const std::string& n) {
    return n.find("key_cache: read in OpenVINO's u8 byte layout") != std::string::npos;
  }));
  Tensor swapped = Tensor::copy_of(k.view());
  const std::int64_t rows = swapped.size(2), width = swapped.size(3);
  for (std::int64_t bh = 0; bh < swapped.size(0) * swapped.size(1); ++bh)
    for (std::int64_t r = 16; r < rows; ++r)  // 16 param rows (u4: 64 / 4), then the codes
      for (std::int64_t x = 0; x < width; ++x) {
        std::uint8_t& b = swapped.data<std::uint8_t>()[(bh * rows + r) * width + x];
        b = static_cast<std::uint8_t>((b >> 4) | (b << 4));
      }
  const CaseReport bad =
      fx.diff({{"out", fx.g.find("out")->view()}, {"key_cache", swapped.view()}, {"value_cache", v.view()}},
              "ov_swap");
  CHECK_FALSE(bad.passed());
  CHECK_FALSE(fx.tensor(bad, "key_cache").passed);
  CHECK(fx.tensor(bad, "key_cache_scale").passed);

  // Where pao's own shape and OpenVINO's coincide (u4 by token, head size 16: 8 + 16 / 2 bytes a
  // row), a cache is read as pao's: the golden's own outputs pass.
  Fixture same(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 16, "block_size": 16,
      "dtype": "f16", "kv_cache_dtype": "u4", "kv_layout": "hnd", "kv_quant": {"key": "by_token", "rule": "openvino"},
      "query_lens": [5, 3], "seq_lens": [20, 3], "seed": 2})");
  NamedTensorViews own;
  for (const char* name : {"key_cache", "value_cache", "key_cache_scale", "key_cache_zero_point",
                           "value_cache_scale", "value_cache_zero_point"})
    own.emplace_back(name, same.g.find(name)->view());
  CHECK(same.diff(own, "own").passed());
  own.erase(own.begin() + 2, own.end());  // the caches alone: still pao's shape, so pao's layout
  const CaseReport caches_only = same.diff(own, "caches_only");
  CHECK(same.tensor(caches_only, "key_cache").passed);
  CHECK(same.tensor(caches_only, "key_cache_scale").problem.find("absent from ACTUAL") != std::string::npos);
}

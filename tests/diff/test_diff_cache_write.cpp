// reshape_and_cache goldens through `pao diff`: a correct write passes bit for bit (also as vLLM's
// uint8 fp8 caches); real write bugs, computed here element by element, fail with their location
// and pattern: the scale ignored, rounding twice through f16, round-toward-zero (one ulp), a token
// not written, a padding row (slot -1) written.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/numerics/formats.hpp"
#include "support/golden_on_disk.hpp"

using namespace pao;
using namespace pao::diff;
namespace fs = std::filesystem;

namespace {

/// How a vendor turns one element x (the activation value) into the stored bits of an fp8 cache.
using Fp8Write = std::function<std::uint8_t(DType cache, float x, float scale)>;

std::uint8_t fp8_rne(DType cd, float v) {
  return cd == DType::fp8_e4m3 ? encode_fp8_e4m3_from_f32(v) : encode_fp8_e5m2_from_f32(v);
}
float fp8_decode(DType cd, std::uint8_t b) {
  return cd == DType::fp8_e4m3 ? decode_fp8_e4m3(b) : decode_fp8_e5m2(b);
}

struct VendorOptions {
  Fp8Write fp8 = [](DType cd, float x, float s) { return fp8_rne(cd, x / s); };
  bool skip_last_token = false;  // of every sequence
  bool write_padding = false;    // slot -1 rows land in a slot no token maps to
};

/// The first slot of the pool no token maps to (where a -1 row lands in a vendor that wraps it).
std::int64_t free_slot(const Tensor& slots, std::int64_t num_slots) {
  for (std::int64_t s = 0; s < num_slots; ++s) {
    bool used = false;
    for (std::int64_t t = 0; t < slots.size(0); ++t) used |= static_cast<std::int64_t>(slots.at({t})) == s;
    if (!used) return s;
  }
  return -1;
}

/// A vendor's reshape_and_cache, written here element by element on copies of the golden's caches.
std::pair<Tensor, Tensor> vendor_write(const golden::GoldenTensors& g, const VendorOptions& o) {
  const cases::Case& c = g.golden_case;
  std::pair<Tensor, Tensor> out{Tensor::copy_of(g.find("key_cache_before")->view()),
                                Tensor::copy_of(g.find("value_cache_before")->view())};
  const Tensor& slots = *g.find("slot_mapping");
  const auto starts = c.query_start_locs();
  for (const bool key : {true, false}) {
    Tensor& cache = key ? out.first : out.second;
    const Tensor& src = *g.find(key ? "key" : "value");
    const CacheTensor which = key ? CacheTensor::key : CacheTensor::value;
    const PagedCacheLayout layout = contiguous_cache_layout(c.kv_layout, which, cache.shape());
    const DType cd = cache.dtype();
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(cd));
    for (std::int64_t t = 0; t < src.size(0); ++t) {
      std::int64_t slot = static_cast<std::int64_t>(slots.at({t}));
      bool last = false;
      for (std::size_t s = 0; s + 1 < starts.size(); ++s)
        last |= t + 1 == starts[s + 1] && starts[s + 1] > starts[s];
      if (o.skip_last_token && last) continue;
      if (slot < 0) {
        if (!o.write_padding) continue;
        slot = free_slot(slots, cache.size(0) * c.block_size);
      }
      for (std::int64_t h = 0; h < c.num_kv_heads; ++h)
        for (std::int64_t d = 0; d < c.head_size; ++d) {
          std::byte* at = cache.bytes() + layout.offset(slot / c.block_size, h, slot % c.block_size, d) * es;
          if (is_fp8(cd)) {
            const auto x = static_cast<float>(src.at({t, h, d}));
            const std::uint8_t b = o.fp8(cd, x, c.kv_scale(which, static_cast<std::int32_t>(h)));
            std::memcpy(at, &b, 1);
          } else {
            std::memcpy(at, src.bytes() + (src.view().offset({t, h, d})) * es, static_cast<std::size_t>(es));
          }
        }
    }
  }
  return out;
}

struct Fixture : test::GoldenOnDisk {
  explicit Fixture(const std::string& json) : GoldenOnDisk(cases::parse_case(json, "rc")) {}

  using GoldenOnDisk::diff;
  /// A vendor's written caches through pao diff.
  CaseReport diff(const std::pair<Tensor, Tensor>& caches, const std::string& name,
                  bool as_u8 = false) const {
    TensorView k = caches.first.view(), v = caches.second.view();
    if (as_u8) k.dtype = v.dtype = DType::u8;  // vLLM's uint8 fp8 caches: the same bytes
    return diff({{"key_cache", k}, {"value_cache", v}}, name);
  }
};

const char* kFp8 = R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "block_size": 16,
    "dtype": "f32", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.02, "v_scale": 0.03, "kv_layout": "hnd",
    "query_lens": [40, 3, 17], "seq_lens": [60, 10, 17], "seed": 9})";

}  // namespace

TEST_CASE("reshape_and_cache golden: inputs, caches before and after, slot_mapping with -1 padding") {
  Fixture f(kFp8);
  const Tensor& slots = *f.g.find("slot_mapping");
  CHECK(slots.dtype() == DType::i64);
  CHECK(slots.size(0) == 60 + 2);  // the new tokens and padding_tokens (default 2)
  CHECK(slots.at({60}) == -1);
  CHECK(slots.at({61}) == -1);
  CHECK(f.g.find("key")->shape() == Shape{62, 2, 64});
  CHECK(f.g.find("key_cache")->shape() == f.g.find("key_cache_before")->shape());
  CHECK(f.g.metadata.at("outputs") == "key_cache,value_cache");
  // The context is in the cache before; the new tokens' slots are not (NaN poison).
  const Tensor& before = *f.g.find("key_cache_before");
  const auto s0 = static_cast<std::int64_t>(slots.at({0}));
  CHECK(std::isnan(before.at({s0 / 16, 0, s0 % 16, 0})));
}

TEST_CASE("reshape_and_cache: a correct write passes bit for bit, also as uint8 codes") {
  Fixture f(kFp8);
  const auto good = vendor_write(f.g, {});
  const CaseReport r = f.diff(good, "good");
  CHECK(r.passed());
  REQUIRE(r.tensors.size() == 2);
  CHECK(r.tensors[0].policy.rule == Rule::bitwise);
  CHECK(r.tensors[0].compared == f.g.find("key_cache")->numel());
  CHECK(f.diff(good, "good_u8", true).passed());
}

TEST_CASE("reshape_and_cache: the scale ignored") {
  Fixture f(kFp8);
  VendorOptions o;
  o.fp8 = [](DType cd, float x, float) { return fp8_rne(cd, x); };
  const CaseReport r = f.diff(vendor_write(f.g, o), "noscale");
  CHECK_FALSE(r.passed());
  for (const auto& t : r.tensors) {
    CHECK(t.verdict.pattern == Pattern::scale_ignored);
    // Located: the token, its sequence and position, the slot, block, offset, head and dim.
    CHECK(t.verdict.detail.find("every mismatch") != std::string::npos);
    CHECK(t.verdict.detail.find("first at token ") != std::string::npos);
    CHECK(t.verdict.detail.find(", position ") != std::string::npos);
    CHECK(t.verdict.detail.find(") -> slot ") != std::string::npos);
    CHECK(t.verdict.detail.find(", kv head ") != std::string::npos);
  }
}

TEST_CASE("reshape_and_cache: rounding twice, through f16 first") {
  Fixture f(kFp8);
  VendorOptions o;
  o.fp8 = [](DType cd, float x, float s) { return fp8_rne(cd, round_to_f16(x / s)); };
  const CaseReport r = f.diff(vendor_write(f.g, o), "double");
  CHECK_FALSE(r.passed());
  for (const auto& t : r.tensors) {
    CHECK(t.mismatched > 0);
    CHECK(t.mismatched < t.compared / 100);  // only where the two roundings disagree
    CHECK(t.verdict.pattern == Pattern::double_rounding);
  }
}

TEST_CASE("reshape_and_cache: round toward zero is one fp8 code off") {
  Fixture f(kFp8);
  VendorOptions o;
  o.fp8 = [](DType cd, float x, float s) {
    const float q = x / s;
    std::uint8_t b = fp8_rne(cd, q);
    if (std::fabs(fp8_decode(cd, b)) > std::fabs(q) && (b & 0x7f) != 0) --b;  // the code below, toward 0
    return b;
  };
  const CaseReport r = f.diff(vendor_write(f.g, o), "rtz");
  CHECK_FALSE(r.passed());
  for (const auto& t : r.tensors) CHECK_MESSAGE(t.verdict.pattern == Pattern::one_ulp, t.verdict.detail);
}

TEST_CASE("reshape_and_cache: a token not written, a padding row written") {
  Fixture f(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "block_size": 16,
      "dtype": "bf16", "query_lens": [40, 3, 17], "seq_lens": [60, 10, 17], "seed": 9})");
  VendorOptions skip;
  skip.skip_last_token = true;
  const CaseReport r1 = f.diff(vendor_write(f.g, skip), "skip");
  CHECK_FALSE(r1.passed());
  for (const auto& t : r1.tensors) {
    CHECK(t.verdict.pattern == Pattern::not_written);
    CHECK(t.mismatched == 3 * 2 * 64);  // the last token of 3 sequences
  }
  VendorOptions pad;
  pad.write_padding = true;
  const CaseReport r2 = f.diff(vendor_write(f.g, pad), "pad");
  CHECK_FALSE(r2.passed());
  for (const auto& t : r2.tensors) {
    CHECK_MESSAGE(t.verdict.pattern == Pattern::outside_slots, t.verdict.detail);
    CHECK(t.verdict.detail.find("no token (unmapped)") != std::string::npos);
    // Both padding rows (60, 61) land in the first free slot: the last one written is named.
    const std::string row =
        (t.name == "key_cache" ? "key" : "value") + std::string("[61], a padding row (slot -1)");
    CHECK_MESSAGE(t.verdict.detail.find("of this slot holds " + row) != std::string::npos, t.verdict.detail);
  }
}

TEST_CASE("reshape_and_cache case fields: attention-only fields are refused") {
  CHECK_THROWS_WITH_AS(
      cases::parse_case(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64,
      "dtype": "f16", "query_lens": [3], "seq_lens": [5], "alibi": true})",
                        "x"),
      doctest::Contains("'alibi' applies to attention kernels"), Error);
  CHECK_THROWS_WITH_AS(cases::parse_case(R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [5],
      "padding_tokens": 3})",
                                         "x"),
                       doctest::Contains("applies to reshape_and_cache cases only"), Error);
  const cases::Case c =
      cases::parse_case(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64,
      "dtype": "f16", "query_lens": [3], "seq_lens": [5], "padding_tokens": 0})",
                        "x");
  CHECK(cases::parse_case(cases::case_to_json(c), "round trip") == c);
  CHECK(c.id == "reshape_and_cache-h2-d64-b16-f16-auto-pad0-q3-l5-s0");
}

TEST_CASE(
    "reshape_and_cache: two bugs at once are counted by kind, with an example of each, commonest first") {
  Fixture f(kFp8);
  VendorOptions o;
  o.fp8 = [](DType cd, float x, float) { return fp8_rne(cd, x); };  // the scale ignored
  o.skip_last_token = true;                                         // and 3 tokens not written
  const CaseReport r = f.diff(vendor_write(f.g, o), "two");
  CHECK_FALSE(r.passed());
  for (const auto& t : r.tensors) {
    CHECK(t.verdict.pattern == Pattern::scattered);
    CHECK(t.verdict.detail.find("consistent with") != std::string::npos);
    CHECK(t.verdict.detail.find(" 384 not-written;") != std::string::npos);  // 3 tokens x 2 heads x 64
    const auto scale = t.verdict.detail.find("the first of each: scale-ignored at token ");
    const auto skipped = t.verdict.detail.find("; not-written at token ");
    CHECK_MESSAGE(scale != std::string::npos, t.verdict.detail);
    CHECK_MESSAGE((skipped != std::string::npos && skipped > scale), t.verdict.detail);
  }
}

TEST_CASE("reshape_and_cache into an integer cache: the written scales and zero points are judged too") {
  Fixture f(R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "block_size": 16,
      "dtype": "bf16", "kv_cache_dtype": "i8", "kv_layout": "hnd",
      "kv_quant": {"key": "by_token", "value": "group_32", "rounding": "half_away"},
      "query_lens": [40, 3, 17], "seq_lens": [60, 10, 17], "seed": 9})");
  CHECK(
      f.g.metadata.at("outputs") ==
      "key_cache,value_cache,key_cache_scale,key_cache_zero_point,value_cache_scale,value_cache_zero_point");
  REQUIRE(f.g.find("value_cache_zero_point_before"));
  auto vendor = [&](const char* stale) {  // the golden's write, one param tensor left as it was before
    NamedTensorViews o;
    for (const char* name : {"key_cache", "value_cache", "key_cache_scale", "key_cache_zero_point",
                             "value_cache_scale", "value_cache_zero_point"})
      o.emplace_back(name,
                     f.g.find(std::string(name) == stale ? std::string(name) + "_before" : name)->view());
    const fs::path p = f.dir.path() / (std::string("v") + stale + ".safetensors");
    write_safetensors(p, o, {});
    return diff_case(f.golden_path, p, {});
  };
  CHECK(vendor("").passed());
  const CaseReport r = vendor("key_cache_scale");
  CHECK_FALSE(r.passed());
  REQUIRE(r.tensors.size() == 6);
  for (const auto& t : r.tensors) {
    CHECK_MESSAGE(t.passed == (t.name != "key_cache_scale"), t.name);
    if (t.name == "key_cache_scale") {
      CHECK(t.verdict.pattern == Pattern::not_written);
      CHECK(t.mismatched == 60 * 2);  // every new token's scale, both kv heads (by token: one per row)
    }
  }
}

// Tests of integer KV-cache quantisation (pao/numerics/kv_quant.hpp): the spec's names, the param
// layouts against their shapes, the parameter rule (0 in range, integer zero points in the code
// range), both rounding rules on exact ties, and reshape_and_cache's integer write (codes within
// half a step, the parameters it writes, what it refuses before writing anything).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/tensor.hpp"
#include "pao/kernels/reshape_and_cache.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "support/expect_error.hpp"

using namespace pao;

TEST_CASE("kv_quant granularities: names round-trip, malformed names are refused") {
  for (const TensorQuant q :
       {TensorQuant{QuantGranularity::by_token, 0}, TensorQuant{QuantGranularity::by_channel, 0},
        TensorQuant{QuantGranularity::group, 32}, TensorQuant{QuantGranularity::group, 1}}) {
    const auto parsed = parse_tensor_quant(to_string(q));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == q);
  }
  for (const char* bad :
       {"", "group_", "group_0", "group_x", "group_-4", "per_token", "by_tokens", "group_1234567"})
    CHECK_FALSE(parse_tensor_quant(bad).has_value());
  CHECK(tensor_quant_rule({QuantGranularity::group, 48}, 128).has_value());
  CHECK_FALSE(tensor_quant_rule({QuantGranularity::group, 32}, 128).has_value());
  CHECK(parse_rounding("half_away") == QuantRounding::half_away);
  CHECK_FALSE(parse_rounding("nearest").has_value());
}

TEST_CASE(
    "param layouts: every (block, head, token, dim) maps into its tensor, each cell owned as documented") {
  const std::int64_t nb = 3, nkv = 2, hs = 64, bs = 16;
  for (const TensorQuant q :
       {TensorQuant{QuantGranularity::by_token, 0}, TensorQuant{QuantGranularity::by_channel, 0},
        TensorQuant{QuantGranularity::group, 16}}) {
    INFO(to_string(q));
    const Shape shape = quant_param_shape(q, nb, nkv, hs, bs);
    const QuantParamLayout l = quant_param_layout(q, nkv, hs, bs);
    const std::int64_t cells = shape[0] * shape[1] * shape[2] * shape[3];
    std::set<std::int64_t> seen;
    for (std::int64_t b = 0; b < nb; ++b)
      for (std::int64_t h = 0; h < nkv; ++h)
        for (std::int64_t t = 0; t < bs; ++t)
          for (std::int64_t d = 0; d < hs; ++d) {
            const std::int64_t o = l.offset(b, h, t, d);
            REQUIRE(o >= 0);
            REQUIRE(o < cells);
            // The row-major index of the documented shape's cell.
            const std::int64_t row = shape[2] == 1 ? 0 : t;
            const std::int64_t col = d / (hs / shape[3]);
            CHECK(o == ((b * shape[1] + h) * shape[2] + row) * shape[3] + col);
            seen.insert(o);
          }
    CHECK(static_cast<std::int64_t>(seen.size()) == cells);
  }
  CHECK(quant_param_shape({QuantGranularity::by_channel, 0}, nb, nkv, hs, bs) == Shape{3, 2, 1, 64});
  CHECK(quant_param_shape({QuantGranularity::by_token, 0}, nb, nkv, hs, bs) == Shape{3, 2, 16, 1});
  CHECK(quant_param_shape({QuantGranularity::group, 16}, nb, nkv, hs, bs) == Shape{3, 2, 16, 4});
}

TEST_CASE(
    "parameters: the range holds 0, zero points are integers of the code range, codes within half a step") {
  const KVQuant spec;
  const std::vector<std::vector<float>> groups = {{-1.0f, 0.5f, 0.25f, 2.0f},
                                                  {0.1f, 0.2f, 0.7f},
                                                  {-0.3f, -0.9f, -0.01f},
                                                  {0.0f, 0.0f},
                                                  {1e-30f, -1e-30f}};
  for (const DType code : {DType::u8, DType::i8}) {
    const CodeRange r = code_range(code);
    for (const auto& g : groups) {
      const QuantParams p = choose_quant_params(g.data(), static_cast<std::int64_t>(g.size()), 1, code, spec);
      INFO(dtype_name(code), " scale ", p.scale, " zero point ", p.zero_point);
      CHECK(p.scale > 0.0f);
      CHECK(std::isfinite(p.scale));
      CHECK(p.zero_point == std::nearbyint(p.zero_point));
      CHECK(p.zero_point >= r.lo);
      CHECK(p.zero_point <= r.hi);
      // 0 is exact: its code is the zero point.
      CHECK(quantise(0.0f, p, code_range(code), spec) == static_cast<std::int32_t>(p.zero_point));
      for (const float x : g) {
        const std::int32_t q = quantise(x, p, code_range(code), spec);
        CHECK(q >= r.lo);
        CHECK(q <= r.hi);
        CHECK(std::fabs(dequantise_exact(q, p.scale, p.zero_point) - x) <=
              (0.5 + 1e-4) * p.scale + 1e-37);  // f32 arithmetic at the clamped end
      }
    }
  }
  // An all-positive group still starts at 0 (u8: zero point 0), so the scale spans [0, max].
  const float positive[] = {0.5f, 1.0f};
  const QuantParams p = choose_quant_params(positive, 2, 1, DType::u8, spec);
  CHECK(p.zero_point == 0.0f);
  CHECK(p.scale == 1.0f / 255.0f);
}

TEST_CASE("rounding rules on exact ties: half-even and half-away-from-zero differ, both clamp") {
  const QuantParams unit{1.0f, 0.0f};
  KVQuant half_even, half_away;
  half_away.rounding = QuantRounding::half_away;
  CHECK(quantise(2.5f, unit, code_range(DType::u8), half_even) == 2);
  CHECK(quantise(2.5f, unit, code_range(DType::u8), half_away) == 3);
  CHECK(quantise(3.5f, unit, code_range(DType::u8), half_even) == 4);
  CHECK(quantise(3.5f, unit, code_range(DType::u8), half_away) == 4);
  CHECK(quantise(-2.5f, unit, code_range(DType::i8), half_even) == -2);
  CHECK(quantise(-2.5f, unit, code_range(DType::i8), half_away) == -3);
  CHECK(quantise(300.0f, unit, code_range(DType::u8), half_even) == 255);
  CHECK(quantise(-1.0f, unit, code_range(DType::u8), half_even) == 0);
  CHECK(quantise(-200.0f, unit, code_range(DType::i8), half_away) == -128);
  CHECK(quantise(127.5f, unit, code_range(DType::i8), half_away) == 127);
}

namespace {

/// One block of 4 slots, 1 KV head of 4 dims, HND; key by token, value in groups of 2, both
/// written by reshape_and_cache from one token row.
struct IntegerWrite {
  KVQuant spec;
  Tensor key_cache{DType::u8, {1, 1, 4, 4}}, value_cache{DType::u8, {1, 1, 4, 4}};
  Tensor key_scale, key_zero_point, value_scale, value_zero_point;

  explicit IntegerWrite(QuantRounding rounding, TensorQuant key_quant = {QuantGranularity::by_token, 0}) {
    spec.key = key_quant;
    spec.value = {QuantGranularity::group, 2};
    spec.rounding = rounding;
    key_scale = Tensor(DType::f32, quant_param_shape(spec.key, 1, 1, 4, 4));
    key_zero_point = Tensor(DType::f32, key_scale.shape());
    value_scale = Tensor(DType::f32, quant_param_shape(spec.value, 1, 1, 4, 4));
    value_zero_point = Tensor(DType::f32, value_scale.shape());
  }
  AttentionOptions options() const {
    AttentionOptions o;
    o.kv_quant.spec = spec;
    o.kv_quant.key_scale = key_scale;
    o.kv_quant.key_zero_point = key_zero_point;
    o.kv_quant.value_scale = value_scale;
    o.kv_quant.value_zero_point = value_zero_point;
    return o;
  }
  void write(const std::vector<float>& row, std::int64_t slot) { write_rows({row}, {slot}); }
  void write_rows(const std::vector<std::vector<float>>& rows, const std::vector<std::int64_t>& slot_list) {
    const auto n = static_cast<std::int64_t>(rows.size());
    Tensor k(DType::f32, {n, 1, 4}), slots(DType::i64, {n});
    for (std::int64_t t = 0; t < n; ++t) {
      for (std::int64_t d = 0; d < 4; ++d)
        k.set({t, 0, d}, rows[static_cast<std::size_t>(t)][static_cast<std::size_t>(d)]);
      slots.data<std::int64_t>()[t] = slot_list[static_cast<std::size_t>(t)];
    }
    reshape_and_cache(k, k, key_cache, value_cache, slots, KVLayout::hnd, options());
  }
};

}  // namespace

TEST_CASE("reshape_and_cache into an integer cache: each rounding rule, the parameters it writes") {
  // max 255, min 0: scale 1, zero point 0, so 2.5 and 3.5 are exact ties.
  const std::vector<float> row = {255.0f, 2.5f, 3.5f, 0.0f};
  IntegerWrite even(QuantRounding::half_even), away(QuantRounding::half_away);
  even.write(row, 2);
  away.write(row, 2);
  CHECK(even.key_scale.at({0, 0, 2, 0}) == 1.0);
  CHECK(even.key_zero_point.at({0, 0, 2, 0}) == 0.0);
  CHECK(even.key_cache.at({0, 0, 2, 0}) == 255);
  CHECK(even.key_cache.at({0, 0, 2, 1}) == 2);
  CHECK(away.key_cache.at({0, 0, 2, 1}) == 3);
  CHECK(even.key_cache.at({0, 0, 2, 2}) == 4);
  CHECK(away.key_cache.at({0, 0, 2, 2}) == 4);
  // Value in groups of 2 dims: {255, 2.5} and {3.5, 0} have their own scales.
  CHECK(even.value_scale.at({0, 0, 2, 0}) == 1.0);
  CHECK(even.value_scale.at({0, 0, 2, 1}) == doctest::Approx(3.5 / 255).epsilon(1e-6));
  CHECK(even.value_cache.at({0, 0, 2, 3}) == 0);
  // Only slot 2 was written.
  for (std::int64_t t : {0, 1, 3}) CHECK(even.key_scale.at({0, 0, t, 0}) == 0.0);
}

TEST_CASE("reshape_and_cache into a by_channel cache requantises the block over its earlier tokens") {
  IntegerWrite w(QuantRounding::half_even, {QuantGranularity::by_channel, 0});
  w.write({1, 2, 3, 4}, 0);  // one token: each dim's range [0, x] (0 kept in range), its code 255
  for (std::int64_t d = 0; d < 4; ++d) CHECK(w.key_cache.at({0, 0, 0, d}) == 255);
  CHECK(w.key_scale.at({0, 0, 0, 0}) == doctest::Approx(1.0 / 255).epsilon(1e-6));
  // A second token: token 0 dequantised ((255 - 0) * scale = 1, 2, 3, 4), the block requantised over
  // both: dim 0 spans [0, 3] (token 0 now 85 = 1 / (3 / 255)), dim 3 [0, 4] (token 1 is 0).
  w.write({3, 2, 1, 0}, 1);
  CHECK(w.key_scale.at({0, 0, 0, 0}) == doctest::Approx(3.0 / 255).epsilon(1e-6));
  CHECK(w.key_cache.at({0, 0, 0, 0}) == 85);
  CHECK(w.key_cache.at({0, 0, 1, 0}) == 255);
  CHECK(w.key_cache.at({0, 0, 0, 1}) == 255);  // dim 1: both 2, [0, 2]
  CHECK(w.key_cache.at({0, 0, 1, 1}) == 255);
  CHECK(w.key_cache.at({0, 0, 0, 3}) == 255);
  CHECK(w.key_cache.at({0, 0, 1, 3}) == 0);
  CHECK(w.key_cache.at({0, 0, 2, 0}) == 0);  // slots 2, 3 untouched
  // The earlier tokens' params are checked before they are dequantised (a NaN scale is named).
  IntegerWrite nan_scale(QuantRounding::half_even, {QuantGranularity::by_channel, 0});
  nan_scale.write({1, 2, 3, 4}, 0);
  nan_scale.key_scale.set({0, 0, 0, 2}, std::numeric_limits<double>::quiet_NaN());
  test::expect_error_from(
      [&] {
        nan_scale.write({1, 2, 3, 4}, 1);
      },
      "key_cache_scale[0, 0, 0, 2]: scale nan, zero point 0: block 0 holds 1 earlier token(s)");
  // One call's slots of a block must follow each other (tokens fill a block in order).
  IntegerWrite gap(QuantRounding::half_even, {QuantGranularity::by_channel, 0});
  test::expect_error_from(
      [&] {
        gap.write_rows({{1, 2, 3, 4}, {1, 2, 3, 4}}, {0, 2});
      },
      "block 0 is written at offsets 0 and 2; a by_channel cache's block is written in order");
}

TEST_CASE("reshape_and_cache into an integer cache refuses non-finite rows, writing nothing") {
  IntegerWrite w(QuantRounding::half_even);
  test::expect_error_from(
      [&] {
        w.write({1, std::numeric_limits<float>::quiet_NaN(), 3, 4}, 1);
      },
      "key[0, 0, 1] = nan: an integer cache (u8) cannot hold a value that is not finite");
  for (std::int64_t d = 0; d < 4; ++d) CHECK(w.key_cache.at({0, 0, 1, d}) == 0);
  CHECK(w.key_scale.at({0, 0, 1, 0}) == 0.0);
}

TEST_CASE("integer cache cases: kv_quant is parsed strictly and written back") {
  const std::string base = R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3], )";
  auto parse = [&](const std::string& rest) { return cases::parse_case(base + rest + "}", "t.json"); };
  const cases::Case c =
      parse(R"("kv_cache_dtype": "i8", "kv_quant": {"key": "group_32", "rounding": "half_away"})");
  CHECK(c.integer_cache());
  CHECK(c.kv_quant.key == TensorQuant{QuantGranularity::group, 32});
  CHECK(c.kv_quant.value == TensorQuant{QuantGranularity::by_token, 0});
  CHECK(c.kv_quant.rounding == QuantRounding::half_away);
  CHECK(cases::parse_case(cases::case_to_json(c), "again") == c);
  CHECK(c.id.find("i8-kqg32vqtokaway") != std::string::npos);
  const cases::Case d = parse(R"("kv_cache_dtype": "u8")");
  CHECK(d.kv_quant == KVQuant{});  // OpenVINO's: key by channel, value by token
  CHECK(d.id.find("-u8-") != std::string::npos);
  test::expect_error_from([&] { parse(R"("kv_quant": {"key": "by_token"})"); },
                          "field 'kv_quant' applies to integer caches only");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "kv_quant": {"keys": "by_token"})"); },
                          "unknown key \"keys\"");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "kv_quant": {"value": "group_48"})"); },
                          "group_size 48 does not divide head_size 64");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "kv_quant": {"value": "per_token"})"); },
                          "expected \"by_token\", \"by_channel\" or \"group_<G>\"");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "kv_quant": {"scale_dtype": "bf16"})"); },
                          "\"scale_dtype\" = \"bf16\": expected \"f32\" or \"f16\"");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "k_scale": 0.5)"); },
                          "field 'k_scale' applies to fp8 caches only");
  test::expect_error_from([&] { parse(R"("kv_cache_dtype": "u8", "vllm_faithful": true)"); },
                          "field 'vllm_faithful' vLLM's kernels have no integer KV cache");
  // A golden of an integer cache says it is not what vLLM computes, and why.
  const auto reasons = cases::vllm_incompatibilities(d);
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0] == "vLLM's kernels have no integer KV cache (kv_cache_dtype u8; theirs is auto or fp8)");
  // A cache write into an integer cache is a case too (its golden holds the written params).
  CHECK(
      cases::parse_case(
          R"({"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 64, "seq_lens": [3], "query_lens": [2], "dtype": "f16", "kv_cache_dtype": "u8"})",
          "t.json")
          .integer_cache());
}

TEST_CASE("u4: codes 0..15, packed two to a byte with element 2i in the low nibble") {
  CHECK(code_range(DType::u8, 4).hi == 15);
  CHECK(code_range(DType::u8, 4).lo == 0);
  CHECK_THROWS_AS(code_range(DType::i8, 4), Error);
  const std::uint8_t codes[] = {0, 15, 2, 3, 9, 1};
  std::uint8_t packed[3] = {}, back[6] = {};
  pack_u4(codes, 6, packed);
  CHECK(packed[0] == 0xF0);
  CHECK(packed[1] == 0x32);
  CHECK(packed[2] == 0x19);
  unpack_u4(packed, 6, back);
  for (int i = 0; i < 6; ++i) CHECK(back[i] == codes[i]);
  const std::uint8_t too_big[] = {16, 0};
  test::expect_error_from([&] { pack_u4(too_big, 2, packed); }, "code 0 = 16 does not fit 4 bits");
  test::expect_error_from([&] { pack_u4(codes, 5, packed); }, "5 codes: u4 packs pairs");
  // Parameters of a u4 group use 15 steps.
  KVQuant u4;
  u4.bits = 4;
  const float v[] = {0.0f, 1.5f};
  CHECK(choose_quant_params(v, 2, 1, DType::u8, u4).scale == doctest::Approx(0.1f));
}

TEST_CASE("u4 cases: kv_cache_dtype u4 is a u8 cache of 4-bit codes, not in vLLM's layout") {
  const cases::Case c = cases::parse_case(
      R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3], "kv_cache_dtype": "u4", "kv_layout": "hnd"})",
      "u4.json");
  CHECK(c.cache_storage_dtype() == DType::u8);
  CHECK(c.kv_quant.bits == 4);
  CHECK(cases::kv_cache_dtype_name(c) == "u4");
  CHECK(c.id.find("-u4-hnd-") != std::string::npos);  // OpenVINO's default kv_quant: no tag
  CHECK(cases::parse_case(cases::case_to_json(c), "again") == c);
  test::expect_error_from(
      [] {
        cases::parse_case(
            R"({"num_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [3], "kv_cache_dtype": "u4"})",
            "u4.json");
      },
      "field 'kv_layout' = \"vllm\": a u4 cache packs pairs of dims");
}

TEST_CASE("rule openvino: OpenVINO 2026.4.1's u8 value rows as its cache bytes hold them") {
  // Rows written by OpenVINO's PagedAttentionExtension (CPU, head size 16, KV_CACHE_PRECISION u8) and
  // read back from its cache bytes: [f32 scale, f32 zero point, 16 codes] per token.
  KVQuant ov;
  ov.rule = QuantRule::openvino;
  struct Row {
    std::vector<float> x;
    float scale, zero_point;
    std::vector<int> codes;
  };
  std::vector<float> ties = {0, 255};
  for (int i = 2; i < 16; ++i) ties.push_back(static_cast<float>(i) + 0.5f);
  std::vector<float> shifted = ties;
  for (auto& v : shifted) v -= 0.25f;  // -0.25, 254.75, 2.25, ...
  std::vector<float> ramp;
  for (int i = 0; i < 16; ++i) ramp.push_back(1.0f + static_cast<float>(i) / 15.0f);
  const std::vector<int> tie_codes = {0, 255, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14, 16};
  std::vector<int> ramp_codes;
  for (int i = 0; i < 16; ++i) ramp_codes.push_back(17 * i);
  const std::vector<Row> rows = {
      {ties, 1.0f, -0.0f, tie_codes},     // ties to even: 2.5 -> 2, 3.5 -> 4
      {shifted, 1.0f, 0.25f, tie_codes},  // a fractional zero point: 0 is not in the range
      {std::vector<float>(16, 3.0f), 1e-4f, -30000.0f, std::vector<int>(16, 0)},  // constant: scale 1e-4
      {ramp, 0.003921569f, -254.99998f, ramp_codes},
  };
  for (const Row& r : rows) {
    const QuantParams p = choose_quant_params(r.x.data(), 16, 1, DType::u8, ov);
    CHECK(p.scale == r.scale);
    CHECK(p.zero_point == r.zero_point);
    CHECK(std::signbit(p.zero_point) == std::signbit(r.zero_point));
    for (int d = 0; d < 16; ++d) {
      INFO("dim ", d, " x ", r.x[static_cast<std::size_t>(d)]);
      CHECK(quantise(r.x[static_cast<std::size_t>(d)], p, code_range(DType::u8), ov) ==
            r.codes[static_cast<std::size_t>(d)]);
    }
  }
  // Its conditions: u8 / u4, head sizes of whole vectors, f32 parameters, half-even.
  CHECK_FALSE(quant_rule_conditions(ov, DType::u8, 64).has_value());
  CHECK(quant_rule_conditions(ov, DType::u8, 40).has_value());
  CHECK(quant_rule_conditions(ov, DType::i8, 64).has_value());
  KVQuant f16 = ov;
  f16.scale_dtype = DType::f16;
  CHECK(quant_rule_conditions(f16, DType::u8, 64).has_value());
  test::expect_error_from(
      [] {
        cases::parse_case(
            R"({"num_heads": 2, "head_size": 120, "dtype": "f16", "seq_lens": [3], "kv_cache_dtype": "u8", "kv_layout": "hnd", "kv_quant": {"rule": "openvino"}})",
            "t.json");
      },
      "head_size 120 is not a multiple of 16");
}

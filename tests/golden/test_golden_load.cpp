// load_decode_case / load_prefix_case: one call from a golden file to the arguments it was made
// from. Rerunning the kernel precision on them gives the golden's kernel outputs bit for bit, fp8
// scales included (k_scale 0.5, v_scale 0.25: a scale the loader dropped would show), from a
// safetensors file and from an npy folder; a golden of the other kernel is refused by name.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/writer.hpp"
#include "support/compare.hpp"
#include "support/temp_dir.hpp"

using namespace pao;
using namespace pao::golden;
namespace fs = std::filesystem;

namespace {

// Decode, fp8 e4m3 with per-tensor scales, GQA 4/2, 3 sequences (one mid-block).
const char* kDecodeFp8 = R"({"id": "load-fp8", "num_heads": 4, "num_kv_heads": 2, "head_size": 32,
                             "block_size": 16, "dtype": "f16", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5,
                             "v_scale": 0.25, "partition_size": 64, "seq_lens": [150, 37, 230], "seed": 21})";
// Decode, fp8 e5m2 with per-KV-head scales, ALiBi, soft-cap and a window, warp 64, NHD cache.
const char* kDecodeExtras = R"({"id": "load-extras", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
                                "block_size": 16, "dtype": "bf16", "kv_cache_dtype": "fp8_e5m2",
                                "k_head_scales": [0.5, 2.0], "v_head_scales": [0.25, 4.0], "alibi": true,
                                "soft_cap": 30.0, "sliding_window": 50, "warp_size": 64, "kv_layout": "nhd",
                                "seq_lens": [70, 1], "seed": 5})";
const char* kPrefix = R"({"id": "load-prefix", "kernel": "prefix", "num_heads": 4, "num_kv_heads": 2,
                          "head_size": 32, "block_size": 16, "dtype": "bf16", "kv_cache_dtype": "fp8_e4m3",
                          "k_scale": 0.5, "v_scale": 0.25, "query_lens": [5, 9], "seq_lens": [40, 9],
                          "seed": 4})";

fs::path written(const GoldenTensors& g, const fs::path& dir, GoldenFormat format) {
  return dir / write_golden(g, dir, format).file;
}

}  // namespace

TEST_CASE("load_decode_case: the golden's arguments, its v1.out and v2.out again bit for bit") {
  test::TempDir dir;
  for (const char* json : {kDecodeFp8, kDecodeExtras}) {
    const cases::Case spec = cases::parse_case(json, "load");
    const GoldenTensors golden = make_golden(spec);
    for (const GoldenFormat format : {GoldenFormat::safetensors, GoldenFormat::npy}) {
      CAPTURE(spec.id);
      CAPTURE(to_string(format));
      const cases::DecodeCase c = load_decode_case(written(golden, dir.path(), format));
      CHECK(c.spec.id == spec.id);
      const DecodeArgs args = c.args();
      CHECK(args.options.k_scale == static_cast<float>(spec.k_scale));
      CHECK(args.options.v_scale == static_cast<float>(spec.v_scale));
      CHECK(args.options.k_head_scales.size() == spec.k_head_scales.size());
      CHECK(args.options.alibi_slopes.empty() == !spec.alibi);
      if (spec.alibi) CHECK(args.options.alibi_slopes.numel() == spec.num_heads);

      const KernelTuning& config = c.spec;
      CHECK(test::bitwise_equal(paged_attention_v1(args, Precision::kernel, config).out,
                                *golden.find("v1.out")));
      CHECK(test::bitwise_equal(paged_attention_v2(args, Precision::kernel, config).out,
                                *golden.find("v2.out")));
    }
  }
}

TEST_CASE("load_decode_case: a dropped fp8 scale would show") {
  test::TempDir dir;
  const cases::Case spec = cases::parse_case(kDecodeFp8, "load");
  const GoldenTensors golden = make_golden(spec);
  const cases::DecodeCase c = load_decode_case(written(golden, dir.path(), GoldenFormat::safetensors));
  const KernelTuning& config = c.spec;
  for (const bool drop_k : {true, false}) {
    CAPTURE(drop_k);
    DecodeArgs args = c.args();
    (drop_k ? args.options.k_scale : args.options.v_scale) = 1.0f;
    CHECK_FALSE(
        test::bitwise_equal(paged_attention_v1(args, Precision::kernel, config).out, *golden.find("v1.out")));
  }
}

TEST_CASE("load_prefix_case: the golden's arguments, its prefix.out again bit for bit") {
  test::TempDir dir;
  const cases::Case spec = cases::parse_case(kPrefix, "load");
  const GoldenTensors golden = make_golden(spec);
  for (const GoldenFormat format : {GoldenFormat::safetensors, GoldenFormat::npy}) {
    CAPTURE(to_string(format));
    const cases::PrefixCase c = load_prefix_case(written(golden, dir.path(), format));
    const PrefixArgs args = c.args();
    CHECK(args.options.k_scale == 0.5f);
    CHECK(args.options.v_scale == 0.25f);
    CHECK(test::bitwise_equal(prefix_attention(args, Precision::kernel, c.spec).out,
                              *golden.find("prefix.out")));
  }
}

TEST_CASE("load_decode_case / load_prefix_case: a golden of the other kernel is refused, naming the file") {
  test::TempDir dir;
  const fs::path decode =
      written(make_golden(cases::parse_case(kDecodeFp8, "load")), dir.path(), GoldenFormat::safetensors);
  const fs::path prefix =
      written(make_golden(cases::parse_case(kPrefix, "load")), dir.path(), GoldenFormat::safetensors);
  std::string decode_message = decode.string(), prefix_message = prefix.string();
  decode_message.append(": a golden of the decode kernel (case load-fp8), not of the prefix kernel");
  prefix_message.append(": a golden of the prefix kernel (case load-prefix), not of the decode kernel");
  CHECK_THROWS_WITH_AS(load_prefix_case(decode), doctest::Contains(decode_message.c_str()), Error);
  CHECK_THROWS_WITH_AS(load_decode_case(prefix), doctest::Contains(prefix_message.c_str()), Error);
  CHECK_THROWS_WITH_AS(load_decode_case(dir.path() / "none.safetensors"),
                       doctest::Contains("none.safetensors"), Error);
}

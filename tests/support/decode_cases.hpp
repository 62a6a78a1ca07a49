// The decode case tables of the tests: the vLLM test grid (heads (40,40) and (64,8), head sizes
// 32..256, block sizes 8/16/32, f32/f16/bf16, fp8 e4m3/e5m2 with scales, ALiBi on/off) walked so
// that every value of every axis appears, with sequence lengths kept small for CI.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "pao/decode_case.hpp"

namespace pao::test {

inline std::string describe(const DecodeCaseSpec& s) {
  std::ostringstream os;
  os << "heads=" << s.num_heads << "/" << s.num_kv_heads << " hs=" << s.head_size << " bs=" << s.block_size
     << " dtype=" << dtype_name(s.dtype) << " cache=" << dtype_name(s.kv_cache_dtype)
     << " layout=" << (s.kv_layout == KVLayout::vllm ? "vllm" : "nhd") << " seq_lens=[";
  for (std::size_t i = 0; i < s.seq_lens.size(); ++i) os << (i ? "," : "") << s.seq_lens[i];
  os << "] part=" << s.partition_size << " alibi=" << s.alibi << " soft_cap=" << s.soft_cap
     << " window=" << s.sliding_window << " k_scale=" << s.k_scale << " v_scale=" << s.v_scale
     << " dist=" << to_string(s.distribution) << " seed=" << s.seed;
  return os.str();
}

inline std::vector<DecodeCaseSpec> vllm_grid_cases() {
  const std::int32_t head_sizes[] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  const std::int32_t heads[][2] = {{40, 40}, {64, 8}};
  const std::int32_t block_sizes[] = {16, 32, 8};
  std::vector<DecodeCaseSpec> cases;
  int i = 0;
  for (auto hs : head_sizes) {
    for (auto dt : dtypes) {
      DecodeCaseSpec s;
      s.num_heads = heads[i % 2][0];
      s.num_kv_heads = heads[i % 2][1];
      s.head_size = hs;
      s.block_size = block_sizes[(i + i / 3) % 3];  // each head size takes all three, one per dtype
      s.dtype = dt;
      s.kv_cache_dtype = dt;
      if (i % 4 == 3 && hs % 16 == 0) {
        s.kv_cache_dtype = (i / 4) % 2 ? DType::fp8_e5m2 : DType::fp8_e4m3;
        s.k_scale = 0.5f;
        s.v_scale = 0.25f;
      }
      s.alibi = (i / 2) % 2 == 1;  // on and off with both head shapes
      s.kv_layout = i % 5 == 4 ? KVLayout::nhd : KVLayout::vllm;
      s.num_seqs = 3;
      s.seq_lens = {1 + (i * 7) % 23, 0 + (i * 13) % 61, 45 + i % 11};
      s.partition_size = s.block_size * 2;
      s.seed = static_cast<std::uint64_t>(1000 + i);
      cases.push_back(s);
      ++i;
    }
  }
  return cases;
}

/// Options beyond the grid: GQA/MQA, soft-cap, sliding window, distributions, per-case edges.
inline std::vector<DecodeCaseSpec> feature_cases() {
  std::vector<DecodeCaseSpec> cases;
  auto base = [] {
    DecodeCaseSpec s;
    s.num_heads = 8;
    s.num_kv_heads = 2;
    s.head_size = 64;
    s.block_size = 16;
    s.num_seqs = 4;
    s.seq_lens = {0, 1, 33, 100};
    s.partition_size = 32;
    s.seed = 7;
    return s;
  };
  auto add = [&](auto edit) {
    DecodeCaseSpec s = base();
    edit(s);
    s.seed = 7 + cases.size();
    cases.push_back(s);
  };
  add([](DecodeCaseSpec& s) { s.num_kv_heads = 1; });  // MQA
  add([](DecodeCaseSpec& s) { s.num_kv_heads = 8; });  // MHA
  add([](DecodeCaseSpec& s) {
    s.soft_cap = 5.0f;
    s.distribution = ValueDistribution::large_logits;
  });
  add([](DecodeCaseSpec& s) { s.sliding_window = 20; });
  add([](DecodeCaseSpec& s) {
    s.sliding_window = 1;
    s.alibi = true;
  });
  add([](DecodeCaseSpec& s) {
    s.distribution = ValueDistribution::large_logits;
    s.dtype = s.kv_cache_dtype = DType::bf16;
  });
  add([](DecodeCaseSpec& s) { s.distribution = ValueDistribution::near_ties; });
  add([](DecodeCaseSpec& s) { s.distribution = ValueDistribution::dominant_token; });
  add([](DecodeCaseSpec& s) {
    s.distribution = ValueDistribution::all_equal;
    s.dtype = s.kv_cache_dtype = DType::f32;
  });
  add([](DecodeCaseSpec& s) {
    s.kv_cache_dtype = DType::fp8_e4m3;
    s.k_scale = 0.03125f;
    s.v_scale = 2.0f;
    s.distribution = ValueDistribution::large_logits;
  });
  add([](DecodeCaseSpec& s) {
    s.kv_cache_dtype = DType::fp8_e5m2;
    s.dtype = DType::bf16;
    s.k_scale = 0.7f;
    s.v_scale = 1.3f;
  });
  add([](DecodeCaseSpec& s) {
    s.kv_layout = KVLayout::nhd;
    s.block_size = 32;
    s.alibi = true;
  });
  add([](DecodeCaseSpec& s) {
    s.block_size = 64;
    s.partition_size = 64;
    s.dtype = s.kv_cache_dtype = DType::f32;
  });
  add([](DecodeCaseSpec& s) {
    s.max_seq_len = 300;
    s.partition_size = 16;
  });  // partitions past every end
  return cases;
}

/// The grid followed by the feature cases.
inline std::vector<DecodeCaseSpec> all_decode_cases() {
  auto cases = vllm_grid_cases();
  for (auto& c : feature_cases()) cases.push_back(c);
  return cases;
}

}  // namespace pao::test

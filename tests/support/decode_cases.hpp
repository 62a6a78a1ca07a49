// The decode case tables of the tests: the vLLM test grid (heads (40,40) and (64,8), head sizes
// 32..256, block sizes 8/16/32, f32/f16/bf16, fp8 e4m3/e5m2 with scales, ALiBi on/off) walked so
// that every value of every axis appears, with sequence lengths kept small for CI.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "attention_case.hpp"
#include "integer_reference.hpp"
#include "pao/cases/case_tensors.hpp"
#include "shared_feature_cases.hpp"

namespace pao::test {

/// Every field of a case, for INFO: its canonical JSON (pao/cases/case.hpp).
inline std::string describe(const cases::Case& c) { return cases::case_to_json(c); }

/// The case's KV cache for a loop over storage dtypes: an fp8 flavour, or the activation dtype.
inline std::optional<DType> kv_cache_of(DType storage) {
  return dtype_info(storage).cache_format ? std::optional<DType>(storage) : std::nullopt;
}

inline std::vector<cases::Case> vllm_grid_cases() {
  const std::int32_t head_sizes[] = {32, 64, 80, 96, 112, 120, 128, 192, 256};
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  const std::int32_t heads[][2] = {{40, 40}, {64, 8}};
  const std::int32_t block_sizes[] = {16, 32, 8};
  std::vector<cases::Case> cases;
  int i = 0;
  for (auto hs : head_sizes) {
    for (auto dt : dtypes) {
      cases::Case s;
      s.num_heads = heads[i % 2][0];
      s.num_kv_heads = heads[i % 2][1];
      s.head_size = hs;
      s.block_size = block_sizes[(i + i / 3) % 3];  // each head size takes all three, one per dtype
      s.dtype = dt;
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
inline std::vector<cases::Case> feature_cases() {
  std::vector<cases::Case> cases;
  auto base = [] {
    cases::Case s = attention_case(8, 2, 64, 16, {0, 1, 33, 100});
    s.partition_size = 32;
    s.seed = 7;
    return s;
  };
  auto add = [&](auto edit) {
    cases::Case s = base();
    edit(s);
    s.seed = 7 + cases.size();
    cases.push_back(s);
  };
  add([](cases::Case& s) { s.num_kv_heads = 1; });  // MQA
  add([](cases::Case& s) { s.num_kv_heads = 8; });  // MHA
  add([](cases::Case& s) {
    s.soft_cap = 5.0f;
    s.distribution = cases::ValueDistribution::large_logits;
  });
  add([](cases::Case& s) { s.sliding_window = 20; });
  add([](cases::Case& s) {
    s.sliding_window = 1;
    s.alibi = true;
  });
  add_distribution_and_fp8_cases(add);
  add([](cases::Case& s) {
    s.kv_layout = KVLayout::nhd;
    s.block_size = 32;
    s.alibi = true;
  });
  add([](cases::Case& s) {
    s.block_size = 64;
    s.partition_size = 64;
    s.dtype = DType::f32;
  });
  add([](cases::Case& s) {
    s.max_seq_len = 300;
    s.partition_size = 16;
  });  // partitions past every end
  add_integer_cache_cases(add);
  return cases;
}

/// The grid followed by the feature cases.
inline std::vector<cases::Case> all_decode_cases() {
  auto cases = vllm_grid_cases();
  for (auto& c : feature_cases()) cases.push_back(c);
  return cases;
}

/// Two sequences of 20 and 5 tokens, 4 heads on 2 KV heads of 32, blocks of 16: the small case
/// the input-check tests edit.
inline cases::Case two_short_sequences() { return attention_case(4, 2, 32, 16, {20, 5}); }

/// f32 queries over an fp8 cache with a scale of 4e-4 (not a power of two): where vLLM's half2
/// dequantisation path shows (fp8_dequant_through_half). 4 heads on 2, head_size 64.
inline cases::Case f32_over_fp8_case(std::int32_t block_size, std::optional<DType> kv,
                                     std::vector<std::int32_t> seq_lens) {
  const std::int32_t longest = *std::max_element(seq_lens.begin(), seq_lens.end());
  cases::Case c = attention_case(4, 2, 64, block_size, std::move(seq_lens));
  c.dtype = DType::f32;
  c.kv_cache_dtype = kv;
  c.k_scale = 4e-4;
  c.v_scale = 4e-4;
  c.max_seq_len = longest;
  c.partition_size = 64;
  c.id = "f32-fp8-scale4e-4-b";
  c.id.append(std::to_string(block_size));
  return c;
}

}  // namespace pao::test

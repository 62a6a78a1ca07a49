// The prefix case tables of the tests: mixed batches (no context = plain causal prefill, one new
// token = decode-like, long context + short chunk, an empty query in the middle, a chunk longer
// than block_m), every activation dtype, fp8 caches with scales, both cache layouts, GQA/MQA,
// ALiBi, soft-cap, sliding windows and value distributions. Sizes are kept small for CI; small
// tile sizes make small cases walk many tiles.
#pragma once

#include <vector>

#include "integer_reference.hpp"
#include "pao/cases/case_tensors.hpp"
#include "shared_feature_cases.hpp"

namespace pao::test {

/// Sets a prefix case's sequences from (context, new tokens) per sequence.
inline void set_lengths(cases::Case& s, const std::vector<std::int32_t>& context_lens,
                        const std::vector<std::int32_t>& query_lens) {
  s.query_lens = query_lens;
  s.seq_lens.clear();
  for (std::size_t i = 0; i < query_lens.size(); ++i) s.seq_lens.push_back(context_lens[i] + query_lens[i]);
  s.num_seqs = static_cast<std::int32_t>(query_lens.size());
}

/// The basic mixed batch: (context, new tokens) = (0, 37) (37, 1) (45, 9) (20, 0) (3, 40).
inline cases::Case mixed_batch() {
  cases::Case s;
  s.kernel = cases::CaseKernel::prefix;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_size = 64;
  s.block_size = 16;
  set_lengths(s, {0, 37, 45, 20, 3}, {37, 1, 9, 0, 40});
  s.block_m = 16;
  s.block_n = 16;
  s.context_tile = 16;
  s.seed = 300;
  return s;
}

/// Every dtype, both layouts, fp8 flavours, head sizes and block sizes, with tile sizes varied.
inline std::vector<cases::Case> prefix_grid_cases() {
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  const std::int32_t head_sizes[] = {64, 80, 128, 32};
  const std::int32_t block_sizes[] = {16, 8, 32, 12};
  const std::int32_t heads[][2] = {{4, 2}, {4, 4}, {6, 1}};
  const std::int32_t tiles[][3] = {{16, 16, 16}, {32, 16, 32}, {128, 64, 32}, {16, 32, 8}};
  std::vector<cases::Case> cases;
  for (int i = 0; i < 12; ++i) {
    cases::Case s = mixed_batch();
    s.dtype = dtypes[i % 3];
    s.head_size = head_sizes[i % 4];
    s.block_size = block_sizes[(i / 3) % 4];
    s.num_heads = heads[i % 3][0];
    s.num_kv_heads = heads[i % 3][1];
    s.block_m = tiles[i % 4][0];
    s.block_n = tiles[i % 4][1];
    s.context_tile = tiles[i % 4][2];
    s.kv_layout = i % 2 ? KVLayout::nhd : KVLayout::vllm;
    if (i % 4 == 1 || i % 4 == 2) {
      s.kv_cache_dtype = i % 4 == 1 ? DType::fp8_e4m3 : DType::fp8_e5m2;
      s.k_scale = 0.5f;
      s.v_scale = 0.25f;
    }
    s.alibi = i % 3 == 2;
    s.cache_new_tokens = i % 2 == 0;
    s.seed = static_cast<std::uint64_t>(400 + i);
    cases.push_back(s);
  }
  return cases;
}

/// Options and distributions on the mixed batch.
inline std::vector<cases::Case> prefix_feature_cases() {
  std::vector<cases::Case> cases;
  auto add = [&](auto edit) {
    cases::Case s = mixed_batch();
    edit(s);
    s.seed = 500 + cases.size();
    cases.push_back(s);
  };
  add([](cases::Case& s) { s.num_kv_heads = 1; });  // MQA
  add([](cases::Case& s) {
    s.soft_cap = 5.0f;
    s.distribution = cases::ValueDistribution::large_logits;
  });
  add([](cases::Case& s) { s.sliding_window = 7; });  // shorter than a chunk
  add([](cases::Case& s) {
    s.sliding_window = 1;
    s.alibi = true;
  });
  add([](cases::Case& s) {
    s.sliding_window = 30;
    s.block_m = 8;
    s.block_n = 8;
    s.context_tile = 8;
  });
  add_distribution_and_fp8_cases(add);
  add([](cases::Case& s) {
    s.kv_layout = KVLayout::nhd;
    s.block_size = 32;
    s.alibi = true;
    s.soft_cap = 2.0f;
  });
  add([](cases::Case& s) {
    s.scale = 0.3f;
    s.alibi = true;
    s.sliding_window = 12;
  });
  // Defaults of vLLM's kernel and a chunk longer than block_m with a ragged last tile.
  add([](cases::Case& s) {
    s.block_m = 128;
    s.block_n = 64;
    s.context_tile = 32;
    set_lengths(s, {70, 0, 5}, {150, 1, 130});
    s.head_size = 32;
  });
  add_integer_cache_cases(add);
  return cases;
}

inline std::vector<cases::Case> all_prefix_cases() {
  auto cases = prefix_grid_cases();
  for (auto& c : prefix_feature_cases()) cases.push_back(c);
  return cases;
}

}  // namespace pao::test

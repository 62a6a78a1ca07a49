// Building decode inputs from a seed, the way vLLM's tests and a serving engine lay them out:
// random values, a shared pool of KV blocks handed out as a random permutation (non-contiguous
// block tables), NaN poison in every cache slot no sequence uses, garbage in block-table
// entries past a sequence's last block. Tests, `pao golden` and benchmarks all build cases here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pao/paged_attention.hpp"

namespace pao {

/// How the values of query, K and V are drawn.
enum class ValueDistribution : std::uint8_t {
  uniform,         // vLLM's tests: uniform(-1/sqrt(head_size), 1/sqrt(head_size))
  large_logits,    // uniform(-4, 4): logits of tens, a peaked softmax
  near_ties,       // K rows nearly equal: logits within a few ulp of each other
  dominant_token,  // one token per sequence aligned with the query: p ~ 1 on it
  all_equal,       // every K row equal: a uniform softmax
  small_integers,  // small integers times a power of two: structural tests compare bit for bit
};
std::string to_string(ValueDistribution d);
ValueDistribution parse_value_distribution(const std::string& name);

struct DecodeCaseSpec {
  std::int32_t num_seqs = 1;
  std::int32_t num_heads = 1;
  std::int32_t num_kv_heads = 1;
  std::int32_t head_size = 64;
  std::int32_t block_size = 16;
  DType dtype = DType::f16;
  DType kv_cache_dtype = DType::f16;  // = dtype, or fp8_e4m3 / fp8_e5m2
  KVLayout kv_layout = KVLayout::vllm;
  std::vector<std::int32_t> seq_lens{1};
  /// Physical blocks in the pool; 0: the blocks the sequences need plus num_seqs spare ones.
  std::int32_t num_blocks = 0;
  /// Extra block-table columns past the longest sequence's need (filled with garbage).
  std::int32_t extra_table_columns = 1;
  std::int32_t max_seq_len = 0;  // 0: longest seq_len
  std::int32_t partition_size = 512;
  std::optional<float> scale;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  bool alibi = false;
  float soft_cap = 0.0f;
  std::int32_t sliding_window = 0;
  ValueDistribution distribution = ValueDistribution::uniform;
  bool poison_unused = true;  // NaN in every cache slot that no token of any sequence occupies
  std::uint64_t seed = 0;
};

struct DecodeCase {
  DecodeCaseSpec spec;
  Tensor query, key_cache, value_cache, block_tables, seq_lens, alibi_slopes;

  /// Views onto this case's tensors (valid while the case lives).
  DecodeArgs args() const;
};

DecodeCase make_decode_case(const DecodeCaseSpec& spec);

/// ALiBi slopes of the Press et al. recipe for num_heads (geometric, 2^(-8/n) based).
std::vector<float> alibi_slopes_for(std::int32_t num_heads);

}  // namespace pao

// The shape of a test case in one call: how many query heads on how many KV heads, the head and
// block sizes, and the sequences' lengths (num_seqs follows from them).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "pao/cases/case.hpp"

namespace pao::test {

/// A case of seq_lens.size() sequences: num_heads query heads on num_kv_heads KV heads of
/// head_size, blocks of block_size tokens; every other field at its default.
inline cases::Case attention_case(std::int32_t num_heads, std::int32_t num_kv_heads, std::int32_t head_size,
                                  std::int32_t block_size, std::vector<std::int32_t> seq_lens) {
  cases::Case s;
  s.num_seqs = static_cast<std::int32_t>(seq_lens.size());
  s.num_heads = num_heads;
  s.num_kv_heads = num_kv_heads;
  s.head_size = head_size;
  s.block_size = block_size;
  s.seq_lens = std::move(seq_lens);
  return s;
}

}  // namespace pao::test

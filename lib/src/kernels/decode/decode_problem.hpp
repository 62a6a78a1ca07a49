// A validated decode problem: the checked query, the paged KV cache (paged_kv.hpp), the
// sequence lengths and the attention scalars. Built once per call; every decode kernel reads it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/paged_kv.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/plan/decode_plan.hpp"

namespace pao::detail {

struct DecodeProblem : AttentionProblem {
  std::int32_t num_seqs = 0, max_seq_len = 0;
  std::vector<std::int32_t> seq_lens;

  /// The plan's shape of this problem with `tuning` (max_seq_len 0: the plan takes the longest).
  DecodeShape shape(const KernelTuning& tuning) const;
};

/// Checks every tensor of `args` and builds the problem. Throws pao::Error naming the tensor,
/// the index and the rule.
DecodeProblem make_decode_problem(const DecodeArgs& args);

}  // namespace pao::detail

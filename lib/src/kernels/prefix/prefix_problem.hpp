// A validated prefix problem: the checked query / key / value, the paged KV cache (paged_kv.hpp),
// the per-sequence lengths and offsets, the attention scalars and the plan. Built once per call;
// both precisions read it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/paged_kv.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/plan/prefix_plan.hpp"

namespace pao::detail {

struct PrefixProblem : AttentionProblem {  // dtype: key / value's too
  std::int32_t num_seqs = 0, num_tokens = 0;
  TensorView key, value;
  std::vector<std::int32_t> seq_lens, query_start_loc, query_lens;
  PrefixPlan plan;
  NewKVSource new_kv_source = NewKVSource::input;
};

/// Checks every tensor of `args` and plans the launch. Throws pao::Error naming the tensor,
/// the index and the rule.
PrefixProblem make_prefix_problem(const PrefixArgs& args, const KernelTuning& tuning);

}  // namespace pao::detail

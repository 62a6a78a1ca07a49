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

struct PrefixProblem {
  std::int32_t num_seqs = 0, num_tokens = 0, num_heads = 0, head_size = 0;
  DType dtype = DType::f32;  // query / key / value / out
  TensorView query, key, value;
  PagedKV kv;
  std::vector<std::int32_t> seq_lens, query_start_loc, query_lens;
  AttentionScalars scalars;
  PrefixPlan plan;
  NewKVSource new_kv_source = NewKVSource::input;

  std::int32_t queries_per_kv() const { return num_heads / kv.num_kv_heads; }
};

/// Checks every tensor of `args` and plans the launch. Throws pao::Error naming the tensor,
/// the index and the rule.
PrefixProblem make_prefix_problem(const PrefixArgs& args, const KernelTuning& tuning);

}  // namespace pao::detail

// CTA decomposition of the decode kernels (V1, V2 and the V2 reduce).
#include "pao/plan/decode_plan.hpp"

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao {

namespace {

void check_shape(KernelVariant kernel, const DecodeShape& s, std::span<const std::int32_t> seq_lens) {
  require(kernel == KernelVariant::v1 || kernel == KernelVariant::v2, "plan_decode: ", to_string(kernel),
          " is not a decode kernel (v1 or v2)");
  check_launch_shape(s, seq_lens.size());
  require_tuning(s, kernel, s.block_size);
  require(s.max_seq_len >= 0, "max_seq_len = ", s.max_seq_len, ": must be >= 0");
  for (std::size_t i = 0; i < seq_lens.size(); ++i) {
    require(seq_lens[i] >= 0, "seq_lens[", i, "] = ", seq_lens[i], ": negative length");
    require(seq_lens[i] <= s.max_seq_len, "seq_lens[", i, "] = ", seq_lens[i],
            " exceeds max_seq_len = ", s.max_seq_len, " (max_seq_len bounds the number of V2 partitions)");
  }
}

}  // namespace

std::int32_t resolved_max_seq_len(std::int32_t max_seq_len, std::span<const std::int32_t> seq_lens) {
  if (max_seq_len != 0) return max_seq_len;  // vLLM passes it; 0 takes the longest sequence
  for (const std::int32_t len : seq_lens) max_seq_len = std::max(max_seq_len, len);
  return max_seq_len;
}

DecodePlan plan_decode(KernelVariant kernel, const DecodeShape& given,
                       std::span<const std::int32_t> seq_lens) {
  DecodeShape shape = given;
  shape.max_seq_len = resolved_max_seq_len(given.max_seq_len, seq_lens);
  check_shape(kernel, shape, seq_lens);
  DecodePlan plan;
  plan.kernel = kernel;
  plan.shape = shape;
  const bool v2 = kernel == KernelVariant::v2;
  plan.max_num_partitions = v2 ? max_num_partitions(shape.max_seq_len, shape.partition_size) : 1;
  plan.grid_x = shape.num_heads;
  plan.grid_y = shape.num_seqs;
  plan.grid_z = plan.max_num_partitions;

  plan.ctas.reserve(static_cast<std::size_t>(plan.grid_x) * plan.grid_y * plan.grid_z);
  for (std::int32_t p = 0; p < plan.grid_z; ++p) {
    for (std::int32_t seq = 0; seq < plan.grid_y; ++seq) {
      const std::int32_t seq_len = seq_lens[static_cast<std::size_t>(seq)];
      const IndexRange tokens = partition_tokens(seq_len, v2 ? shape.partition_size : 0, p);
      for (std::int32_t head = 0; head < plan.grid_x; ++head)
        plan.ctas.push_back(AttentionCta{seq, head, p, tokens.begin, tokens.end});
    }
  }
  if (v2) {
    plan.reduce_ctas.reserve(static_cast<std::size_t>(shape.num_seqs) * shape.num_heads);
    for (std::int32_t seq = 0; seq < shape.num_seqs; ++seq) {
      const std::int32_t parts =
          partitions_of_sequence(seq_lens[static_cast<std::size_t>(seq)], shape.partition_size);
      for (std::int32_t head = 0; head < shape.num_heads; ++head)
        plan.reduce_ctas.push_back(ReduceCta{seq, head, parts});
    }
  }

  // vLLM sizes dynamic shared memory as max(logits, cross-warp output scratch).
  const std::size_t num_warps = static_cast<std::size_t>(shape.threads_per_cta / shape.warp_size);
  const std::size_t padded_max_seq_len =
      static_cast<std::size_t>(round_up(shape.max_seq_len, shape.block_size));
  const std::size_t logits_bytes =
      (v2 ? static_cast<std::size_t>(shape.partition_size) : padded_max_seq_len) * sizeof(float);
  const std::size_t outputs_bytes =
      (num_warps / 2) * static_cast<std::size_t>(shape.head_size) * sizeof(float);
  plan.attention_shared_bytes = std::max(logits_bytes, outputs_bytes);
  plan.reduce_shared_bytes = v2 ? 2 * static_cast<std::size_t>(plan.max_num_partitions) * sizeof(float) : 0;
  return plan;
}

}  // namespace pao

// pao/plan/launch_shape.hpp.
#include "pao/plan/launch_shape.hpp"

#include "pao/core/error.hpp"

namespace pao {

void check_launch_shape(const LaunchShape& s, std::size_t num_seq_lens) {
  const auto [num_seqs, num_heads, num_kv_heads, head_size, block_size] = s;
  require(num_seqs >= 0, "num_seqs = ", num_seqs, ": must be >= 0");
  require(static_cast<std::size_t>(num_seqs) == num_seq_lens, "seq_lens has ", num_seq_lens,
          " entries but num_seqs = ", num_seqs);
  require(num_heads > 0 && num_kv_heads > 0, "num_heads = ", num_heads, ", num_kv_heads = ", num_kv_heads,
          ": both must be positive");
  require(num_heads % num_kv_heads == 0, "num_heads = ", num_heads,
          " is not a multiple of num_kv_heads = ", num_kv_heads, " (GQA/MQA needs it)");
  require(head_size > 0, "head_size = ", head_size, ": must be positive");
  require(block_size > 0, "block_size = ", block_size, ": must be positive");
}

const char* supported_head_sizes_text() { return "32, 64, 80, 96, 112, 120, 128, 192, 256"; }

void check_supported_head_size(std::int32_t head_size) {
  require(is_supported_head_size(head_size), "head_size = ", head_size, " is not one of vLLM's head sizes (",
          supported_head_sizes_text(), ")");
}

}  // namespace pao

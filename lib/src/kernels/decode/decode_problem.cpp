// Validation of decode inputs.
#include "kernels/decode/decode_problem.hpp"

#include <algorithm>

#include "pao/core/error.hpp"

namespace pao::detail {

DecodeShape DecodeProblem::shape(const KernelTuning& tuning) const {
  DecodeShape s;
  s.num_seqs = num_seqs;
  s.num_heads = num_heads;
  s.num_kv_heads = kv.num_kv_heads;
  s.head_size = head_size;
  s.block_size = kv.block_size;
  s.max_seq_len = max_seq_len;
  static_cast<KernelTuning&>(s) = tuning;
  return s;
}

DecodeProblem make_decode_problem(const DecodeArgs& args) {
  DecodeProblem p;
  p.num_seqs = p.take_query(args.query, "[num_seqs, num_heads, head_size]");
  p.kv = make_paged_kv(args, p.num_seqs, -1, p.head_size, p.dtype);
  require(p.num_heads % p.kv.num_kv_heads == 0, "query: num_heads = ", p.num_heads,
          " is not a multiple of num_kv_heads = ", p.kv.num_kv_heads, " (key_cache dim 1)");
  p.seq_lens = read_i32_vector(args.seq_lens, "seq_lens", p.num_seqs);
  std::int32_t longest = 0;
  for (std::int32_t s = 0; s < p.num_seqs; ++s) {
    const std::int32_t len = p.seq_lens[static_cast<std::size_t>(s)];
    require(len >= 0, "seq_lens[", s, "] = ", len, ": negative length");
    p.kv.check_sequence(s, len);
    longest = std::max(longest, len);
  }
  require(args.max_seq_len >= 0, "max_seq_len = ", args.max_seq_len, ": must be >= 0 (0 = longest seq_len)");
  p.max_seq_len = args.max_seq_len;  // 0: the plan takes the longest (plan_decode)
  p.scalars = make_scalars(args.options, p.num_heads, p.head_size);
  return p;
}

}  // namespace pao::detail

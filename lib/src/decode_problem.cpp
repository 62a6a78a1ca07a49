// Validation of decode inputs.
#include "decode_problem.hpp"

#include <algorithm>

#include "pao/element.hpp"
#include "pao/error.hpp"

namespace pao::detail {

DecodeShape DecodeProblem::shape(std::int32_t partition_size, const KernelConfig& config) const {
  DecodeShape s;
  s.num_seqs = num_seqs;
  s.num_heads = num_heads;
  s.num_kv_heads = kv.num_kv_heads;
  s.head_size = head_size;
  s.block_size = kv.block_size;
  s.max_seq_len = max_seq_len;
  s.partition_size = partition_size;
  s.threads_per_cta = config.threads_per_cta;
  s.warp_size = config.warp_size;
  return s;
}

DecodeProblem make_decode_problem(const DecodeArgs& args) {
  DecodeProblem p;
  const TensorView& q = args.query;
  const QueryShape qs = check_query(q, "[num_seqs, num_heads, head_size]");
  p.num_seqs = qs.rows;
  p.num_heads = qs.num_heads;
  p.head_size = qs.head_size;
  p.dtype = q.dtype;
  p.query = q;
  p.kv = make_paged_kv(args.key_cache, args.value_cache, args.kv_layout, args.block_tables, p.num_seqs,
                       -1, p.head_size, q.dtype, args.options);
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
  p.max_seq_len = args.max_seq_len > 0 ? args.max_seq_len : longest;
  p.scalars = make_scalars(args.options, p.num_heads, p.head_size);
  return p;
}

namespace {

template <typename T, typename DecodeRow>
void load_rows(const TensorView& q, std::int32_t seq, std::int32_t first_head, std::int32_t n, std::int32_t hs,
               T* dst, DecodeRow decode_row) {
  const std::size_t es = dtype_size(q.dtype);
  for (std::int32_t g = 0; g < n; ++g) {
    T* row = dst + static_cast<std::size_t>(g) * hs;
    if (q.strides[2] == 1) {
      decode_row(q.bytes() + q.offset({seq, first_head + g, 0}) * es, row);
    } else {
      for (std::int32_t d = 0; d < hs; ++d) row[d] = static_cast<T>(q.at({seq, first_head + g, d}));
    }
  }
}

}  // namespace

void DecodeProblem::load_query_rows(std::int32_t seq, std::int32_t first_head, std::int32_t n, double* dst) const {
  load_rows(query, seq, first_head, n, head_size, dst, [&](const std::byte* src, double* row) {
    decode_to_f64(dtype, src, row, static_cast<std::size_t>(head_size));
  });
}

void DecodeProblem::load_query_rows(std::int32_t seq, std::int32_t first_head, std::int32_t n, float* dst) const {
  load_rows(query, seq, first_head, n, head_size, dst, [&](const std::byte* src, float* row) {
    decode_to_f32(dtype, src, row, static_cast<std::size_t>(head_size));
  });
}

}  // namespace pao::detail

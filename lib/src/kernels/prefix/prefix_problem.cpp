// Validation of prefix inputs.
#include "kernels/prefix/prefix_problem.hpp"

#include <sstream>

#include "pao/core/error.hpp"
#include "pao/plan/partition.hpp"

namespace pao::detail {

namespace {

std::vector<std::int32_t> read_i32(const TensorView& t, const char* name, std::int64_t expected,
                                   const char* doc) {
  require(t.dtype == DType::i32, name, ": dtype ", dtype_name(t.dtype), ", expected i32");
  check_tensor(t, name, {expected}, doc);
  std::vector<std::int32_t> v(static_cast<std::size_t>(t.shape[0]));
  for (std::int64_t i = 0; i < t.shape[0]; ++i) v[static_cast<std::size_t>(i)] = t.i32_at({i});
  return v;
}

/// The table must cover the tokens the kernel reads from the cache: the context (ctx_len tokens),
/// or the whole sequence when the new tokens are read from the cache too.
void check_context_blocks(const PagedKV& kv, std::int32_t seq, std::int32_t seq_len, std::int32_t ctx_len,
                          NewKVSource source) {
  const bool whole = source == NewKVSource::cache;
  const std::int32_t used = blocks_for_tokens(whole ? seq_len : ctx_len, kv.block_size);
  std::ostringstream what;
  if (whole)
    what << "the " << seq_len << " tokens of seq_lens[" << seq
         << "] (new_kv_source cache: the new tokens are read from the cache too)";
  else
    what << "the context of " << ctx_len << " tokens (seq_lens[" << seq << "] = " << seq_len
         << " minus query_len " << seq_len - ctx_len << ")";
  require(used <= kv.max_blocks_per_seq, "block_tables[", seq, "]: ", what.str(), " needs ", used,
          " blocks of ", kv.block_size, ", but the table has ", kv.max_blocks_per_seq, " columns");
  const std::int32_t* row = kv.block_table(seq);
  for (std::int32_t b = 0; b < used; ++b)
    require(row[b] >= 0 && row[b] < kv.num_blocks, "block_tables[", seq, "][", b, "] = ", row[b],
            ": block id out of range [0, ", kv.num_blocks, ") of key_cache");
  kv.check_quant_params(seq, whole ? seq_len : ctx_len);
}

}  // namespace

PrefixProblem make_prefix_problem(const PrefixArgs& args, const KernelTuning& tuning) {
  PrefixProblem p;
  p.num_tokens = p.take_query(args.query, "[num_tokens, num_heads, head_size]");

  require(args.key.dtype == p.dtype, "key: dtype ", dtype_name(args.key.dtype), " differs from the query's ",
          dtype_name(p.dtype));
  check_tensor(args.key, "key", {p.num_tokens, -1, p.head_size}, "[num_tokens, num_kv_heads, head_size]");
  const auto num_kv_heads = static_cast<std::int32_t>(args.key.shape[1]);
  require(num_kv_heads > 0, "key: shape ", shape_to_string(args.key.shape), " has no kv heads");
  require(args.value.dtype == p.dtype, "value: dtype ", dtype_name(args.value.dtype),
          " differs from the query's ", dtype_name(p.dtype));
  check_tensor(args.value, "value", {p.num_tokens, num_kv_heads, p.head_size},
               "[num_tokens, num_kv_heads, head_size] like key");
  p.key = args.key;
  p.value = args.value;
  require(p.num_heads % num_kv_heads == 0, "query: num_heads = ", p.num_heads,
          " is not a multiple of num_kv_heads = ", num_kv_heads, " (key dim 1)");

  require(args.seq_lens.dtype == DType::i32, "seq_lens: dtype ", dtype_name(args.seq_lens.dtype),
          ", expected i32");
  check_tensor(args.seq_lens, "seq_lens", {-1}, "[num_seqs]");
  p.num_seqs = static_cast<std::int32_t>(args.seq_lens.shape[0]);
  p.seq_lens = read_i32(args.seq_lens, "seq_lens", p.num_seqs, "[num_seqs]");
  p.query_start_loc = read_i32(args.query_start_loc, "query_start_loc", p.num_seqs + 1, "[num_seqs + 1]");
  require(p.query_start_loc[0] == 0, "query_start_loc[0] = ", p.query_start_loc[0], ": must be 0");
  p.query_lens.resize(static_cast<std::size_t>(p.num_seqs));
  for (std::int32_t s = 0; s < p.num_seqs; ++s) {
    const std::int32_t begin = p.query_start_loc[static_cast<std::size_t>(s)];
    const std::int32_t end = p.query_start_loc[static_cast<std::size_t>(s) + 1];
    require(end >= begin, "query_start_loc[", s + 1, "] = ", end, " is less than query_start_loc[", s,
            "] = ", begin, ": offsets must be non-decreasing");
    require(end <= p.num_tokens, "query_start_loc[", s + 1, "] = ", end,
            " exceeds num_tokens = ", p.num_tokens, " (query dim 0)");
    const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(s)];
    require(seq_len >= end - begin, "seq_lens[", s, "] = ", seq_len, " is less than its query_len ",
            end - begin, " (query_start_loc[", s + 1, "] - query_start_loc[", s,
            "]); seq_len counts context + new tokens");
    p.query_lens[static_cast<std::size_t>(s)] = end - begin;
  }
  require(p.query_start_loc.back() == p.num_tokens, "query_start_loc[", p.num_seqs,
          "] = ", p.query_start_loc.back(), " does not match num_tokens = ", p.num_tokens, " (query dim 0)");

  p.kv = make_paged_kv(args, p.num_seqs, num_kv_heads, p.head_size, p.dtype);
  for (std::int32_t s = 0; s < p.num_seqs; ++s) {
    const std::int32_t seq_len = p.seq_lens[static_cast<std::size_t>(s)];
    check_context_blocks(p.kv, s, seq_len, seq_len - p.query_lens[static_cast<std::size_t>(s)],
                         args.new_kv_source);
  }
  p.new_kv_source = args.new_kv_source;
  p.scalars = make_scalars(args.options, p.num_heads, p.head_size);

  PrefixShape shape;
  shape.num_seqs = p.num_seqs;
  shape.num_heads = p.num_heads;
  shape.num_kv_heads = num_kv_heads;
  shape.head_size = p.head_size;
  shape.block_size = p.kv.block_size;
  shape.max_query_len = args.max_query_len;
  static_cast<KernelTuning&>(shape) = tuning;
  p.plan = plan_prefix(shape, p.seq_lens, p.query_lens);
  return p;
}

}  // namespace pao::detail

// Per-sequence / head / partition / token tallies of a comparison, and the pattern verdict they
// support — what shape of bug the mismatches suggest:
//   none            no mismatch
//   nan-inf         NaN or Inf where the golden is finite (checked first: the loudest symptom)
//   whole-head      some heads (not all) wrong almost everywhere, the others clean (a head
//                   indexing or GQA mapping bug)
//   single-block    the mismatches lie in what one KV block feeds (one V2 partition spanning one
//                   block, or the prefix tokens of one block)
//   sequence-tail   only the last partition of some sequences (decode partials), or a suffix of
//                   some sequences' new tokens (prefix): the end-of-sequence / last-block handling
//   whole-partition one partition index wrong in some sequences while their other partitions are
//                   clean (a partition-offset bug in the V2 partial kernel)
//   whole-sequence  some sequences (not all) wrong in every head; from `out` alone pao cannot tell
//                   which tokens are to blame — diff the V2 partials too
//   scattered       anything else
// and for reshape_and_cache's caches (diff/cache_write.hpp):
//   scale-ignored   every wrong fp8 code is fp8(x), not fp8(x / scale)
//   double-rounding every wrong fp8 code is fp8 of x / scale rounded to f16 or bf16 first
//   one-ulp         every wrong fp8 code is one code from the right one (another rounding)
//   not-written     mapped slots still hold what they held before the write
//   outside-slots   slots no token maps to were written (a -1 padding token, a wrong slot)
// and for final outputs, from their values (diff/diagnose.hpp):
//   uniform-ratio   actual = r x expected nearly everywhere (e.g. a scale applied twice or not at all)
//   matches-variant the output equals the oracle's with one convention changed (a scale ignored, the
//                   window ignored or off by one, ALiBi or soft-cap ignored, the other new-token source)
// and from the structure of the case (diff/structure.hpp), the failing set matching exactly:
//   empty-sequence  exactly the empty sequences (vLLM writes 0 for them)
//   unused-slots    NaN/Inf only in sequences whose last block is partly filled, unused slots NaN
//   kv-head-mapping the heads head % num_kv_heads maps to another KV head than head / group
//   kv-group        the whole groups of some KV heads
//   multi-partition the sequences with 2+ V2 partitions
//   window-edge     the sequences longer than the window / the new tokens past its edge
//   first-token     the one-token sequences / each sequence's first new token
//   last-token      each sequence's last new token
//   causal-mask     every new token but each sequence's last
//   partial-block   the sequences whose last block is partly filled
//   block-boundary  the sequences ending on a block boundary / new tokens at a block's first or last slot
//   long-sequences  the sequences of N tokens or more, the error growing with length
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/diff/location.hpp"

namespace pao::diff {

struct Tally {
  std::int64_t compared = 0;
  std::int64_t mismatched = 0;
  std::int64_t nonfinite = 0;  // NaN / Inf actuals where the golden is finite
  std::int64_t nan = 0;        // of those, NaN (a NaN read propagates as NaN, an empty softmax gives -Inf)
  double max_abs = 0;          // largest finite |actual - expected|
};

struct Tallies {
  std::vector<Tally> per_seq, per_head, per_partition;
  std::vector<Tally> per_seq_partition;  // [seq * max_num_partitions + partition], partials only
  std::vector<Tally> per_token;          // prefix only
  std::int64_t compared = 0, mismatched = 0, nonfinite = 0;

  Tallies(const CaseGeometry& g, OutputLayout layout);
  /// One compared element. nonfinite: a NaN/Inf actual where the golden is finite; nan: it is NaN.
  void add(const Coords& c, bool mismatch, bool nonfinite, bool nan, double abs_error);

 private:
  std::int32_t partitions_ = 1;
};

enum class Pattern : std::uint8_t {
  none,
  nan_inf,
  whole_head,
  single_block,
  sequence_tail,
  whole_partition,
  whole_sequence,
  scattered,
  scale_ignored,
  double_rounding,
  one_ulp,
  not_written,
  outside_slots,
  uniform_ratio,
  matches_variant,
  empty_sequence,
  unused_slots,
  kv_head_mapping,
  kv_group,
  multi_partition,
  window_edge,
  first_token,
  last_token,
  causal_mask,
  partial_block,
  block_boundary,
  long_sequences
};
std::string to_string(Pattern pattern);
/// How much a pattern says about the cause, for picking a case's cause among its failing tensors:
/// a convention named from the values first, then the partition or block to blame, a structural
/// cause, a constant ratio, whole heads or sequences, NaN, scattered last.
int specificity(Pattern pattern);

/// "0, 1, 2" (at most `limit` items, then "... (N in all)").
std::string index_list(const std::vector<std::int32_t>& v, std::size_t limit = 8);

struct Verdict {
  Pattern pattern = Pattern::none;
  std::string detail;  // e.g. "partition 1 of seqs 0, 1, 2, every head"
};

Verdict classify(const CaseGeometry& g, OutputLayout layout, const Tallies& t);

}  // namespace pao::diff

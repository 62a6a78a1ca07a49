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
//   longer-than-window  exactly the sequences longer than the sliding window are wrong
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
  double max_abs = 0;          // largest finite |actual - expected|
};

struct Tallies {
  std::vector<Tally> per_seq, per_head, per_partition;
  std::vector<Tally> per_seq_partition;  // [seq * max_num_partitions + partition], partials only
  std::vector<Tally> per_token;          // prefix only
  std::int64_t compared = 0, mismatched = 0, nonfinite = 0;

  Tallies(const CaseGeometry& g, OutputLayout layout);
  /// One compared element. nonfinite: a NaN/Inf actual where the golden is finite.
  void add(const Coords& c, bool mismatch, bool nonfinite, double abs_error);

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
  longer_than_window
};
std::string to_string(Pattern pattern);

struct Verdict {
  Pattern pattern = Pattern::none;
  std::string detail;  // e.g. "partition 1 of seqs 0, 1, 2, every head"
};

Verdict classify(const CaseGeometry& g, OutputLayout layout, const Tallies& t);

}  // namespace pao::diff

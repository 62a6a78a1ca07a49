// Structural causes: the set of a failing output's wrong rows tested against the structure of its
// case. Each predicate selects the rows a class of bug reaches — the sequences with 2+ V2
// partitions, those longer than the sliding window, those whose last block is partly filled or
// that end on a block boundary, the one-token ones, the longest ones; among a prefix's new tokens
// each sequence's last one, all but the last, the first, those past the window's edge, those at a
// block boundary; the query heads of whole KV groups, or those that head % num_kv_heads maps to
// another KV head than head / group. A predicate the failing set matches exactly (over 10 or more
// rows: nearly, 90% both ways) is the cause `pao diff` names on the pattern: line, e.g.
//   multi-partition — the failing sequences are exactly the sequences with 2+ V2 partitions (seq 2:
//   1 of 3); the single-partition sequences pass: the partials or the reduce (...)
// A predicate that selects none or every row tells nothing apart and is never named.
#pragma once

#include <optional>

#include "pao/diff/location.hpp"
#include "pao/diff/pattern.hpp"

namespace pao::diff {

/// The failing sequences are exactly the empty ones (seq_len 0: vLLM writes 0 for them), some
/// sequences being non-empty.
std::optional<Verdict> empty_sequence_cause(const CaseGeometry& g, const Tallies& t);

/// NaN/Inf only in sequences whose last block is partly filled, in whole rows (every dim of a
/// head), while the golden's unused slots hold NaN: the kernel reads slots past seq_len.
std::optional<Verdict> unused_slots_cause(const CaseGeometry& g, OutputLayout layout, const Tallies& t);

/// The failing heads are exactly whole KV groups, or those that head % num_kv_heads maps to
/// another KV head than head / group (each wrong almost everywhere).
std::optional<Verdict> head_cause(const CaseGeometry& g, const Tallies& t);

/// Prefix outputs: the failing new tokens are each sequence's last, all but the last, the first,
/// those past the window's edge, or those at a block's first or last slot.
std::optional<Verdict> token_cause(const CaseGeometry& g, const Tallies& t);

/// The failing sequences are those with 2+ V2 partitions, longer than the window, of one token,
/// ending mid-block or on a block boundary, or the longest ones (the error growing with length).
std::optional<Verdict> sequence_cause(const CaseGeometry& g, OutputLayout layout, const Tallies& t);

}  // namespace pao::diff

// Tallies of mismatches and the pattern verdict (pao/diff/pattern.hpp).
#include "pao/diff/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "pao/diff/structure.hpp"
#include "pao/plan/partition.hpp"

namespace pao::diff {

namespace {

std::vector<std::int32_t> bad_indices(const std::vector<Tally>& tallies) {
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < tallies.size(); ++i)
    if (tallies[i].mismatched > 0) out.push_back(static_cast<std::int32_t>(i));
  return out;
}

/// Every listed unit is wrong in at least half of its elements.
bool mostly_wrong(const std::vector<Tally>& tallies, const std::vector<std::int32_t>& which) {
  for (auto i : which) {
    const Tally& t = tallies[static_cast<std::size_t>(i)];
    if (2 * t.mismatched < t.compared) return false;
  }
  return true;
}

std::string blocks_text(const CaseGeometry& g, std::int32_t seq, std::int32_t first, std::int32_t last) {
  std::ostringstream os;
  if (first == last) {
    os << "logical block " << first << " (physical " << g.physical_block(seq, first) << ")";
  } else {
    os << "logical blocks " << first << ".." << last;
  }
  return os.str();
}

std::optional<Verdict> partition_verdict(const CaseGeometry& g, const Tallies& t) {
  struct Bad {
    std::int32_t seq, partition;
  };
  std::vector<Bad> bad;
  const std::int32_t P = g.max_num_partitions;
  for (std::int32_t s = 0; s < g.num_seqs; ++s)
    for (std::int32_t p = 0; p < P; ++p)
      if (t.per_seq_partition[static_cast<std::size_t>(s * P + p)].mismatched > 0) bad.push_back({s, p});
  if (bad.empty()) return std::nullopt;
  const bool same_partition =
      std::all_of(bad.begin(), bad.end(), [&](const Bad& b) { return b.partition == bad.front().partition; });
  const bool all_last = std::all_of(bad.begin(), bad.end(),
                                    [&](const Bad& b) { return b.partition == g.partitions_of(b.seq) - 1; });
  const bool some_later = std::any_of(bad.begin(), bad.end(), [](const Bad& b) { return b.partition > 0; });
  std::vector<std::int32_t> seqs;
  for (const auto& b : bad) seqs.push_back(b.seq);

  if (bad.size() == 1) {
    const auto [s, p] = bad.front();
    const IndexRange tokens = partition_tokens(g.seq_lens[static_cast<std::size_t>(s)], g.partition_size, p);
    const IndexRange blocks = blocks_of_tokens(tokens, g.block_size);
    if (!tokens.empty() && blocks.size() == 1) {
      std::ostringstream os;
      os << "seq " << s << ", partition " << p << ": tokens " << tokens.begin << ".." << tokens.end - 1
         << " = " << blocks_text(g, s, blocks.begin, blocks.end - 1);
      return Verdict{Pattern::single_block, os.str()};
    }
  }
  if (all_last && some_later) {
    std::ostringstream os;
    os << "only the last partition of seq" << (seqs.size() > 1 ? "s " : " ") << index_list(seqs);
    if (bad.size() == 1) {
      const auto [s, p] = bad.front();
      const IndexRange tokens =
          partition_tokens(g.seq_lens[static_cast<std::size_t>(s)], g.partition_size, p);
      const IndexRange blocks = blocks_of_tokens(tokens, g.block_size);
      os << " (tokens " << tokens.begin << ".." << tokens.end - 1 << ", "
         << blocks_text(g, s, blocks.begin, blocks.end - 1) << ")";
    }
    return Verdict{Pattern::sequence_tail, os.str()};
  }
  const bool others_clean =
      std::any_of(bad.begin(), bad.end(), [&](const Bad& b) { return g.partitions_of(b.seq) > 1; });
  if (same_partition && others_clean) {
    std::ostringstream os;
    os << "partition " << bad.front().partition << " of seq" << (seqs.size() > 1 ? "s " : " ")
       << index_list(seqs) << "; their other partitions are clean";
    return Verdict{Pattern::whole_partition, os.str()};
  }
  return std::nullopt;
}

std::optional<Verdict> token_verdict(const CaseGeometry& g, const Tallies& t) {
  struct Range {
    std::int32_t first = -1, last = -1;  // bad new-token indices within the sequence
  };
  std::vector<Range> bad(static_cast<std::size_t>(g.num_seqs));
  for (std::size_t tok = 0; tok < t.per_token.size(); ++tok) {
    if (t.per_token[tok].mismatched == 0) continue;
    const std::int32_t s = g.token_seq[tok];
    const std::int32_t i = static_cast<std::int32_t>(tok) - g.query_start_loc[static_cast<std::size_t>(s)];
    Range& r = bad[static_cast<std::size_t>(s)];
    if (r.first < 0) r.first = i;
    r.last = i;
  }
  std::vector<std::int32_t> seqs;
  for (std::int32_t s = 0; s < g.num_seqs; ++s)
    if (bad[static_cast<std::size_t>(s)].first >= 0) seqs.push_back(s);
  if (seqs.empty()) return std::nullopt;
  if (seqs.size() == 1) {
    const std::int32_t s = seqs.front();
    const Range r = bad[static_cast<std::size_t>(s)];
    const std::int32_t ctx = g.context_len(s);
    const std::int32_t first = (ctx + r.first) / g.block_size, last = (ctx + r.last) / g.block_size;
    if (first == last) {
      std::ostringstream os;
      os << "seq " << s << ", new tokens " << r.first << ".." << r.last << " (positions " << ctx + r.first
         << ".." << ctx + r.last << ") = " << blocks_text(g, s, first, last);
      return Verdict{Pattern::single_block, os.str()};
    }
  }
  const bool tails = std::all_of(seqs.begin(), seqs.end(), [&](std::int32_t s) {
    const Range r = bad[static_cast<std::size_t>(s)];
    return r.first > 0 && r.last == g.query_len(s) - 1;
  });
  if (tails) {
    std::ostringstream os;
    os << "only the last new tokens of seq" << (seqs.size() > 1 ? "s " : " ") << index_list(seqs) << " (seq "
       << seqs.front() << " from new token " << bad[static_cast<std::size_t>(seqs.front())].first << " on)";
    return Verdict{Pattern::sequence_tail, os.str()};
  }
  return std::nullopt;
}

}  // namespace

std::string index_list(const std::vector<std::int32_t>& v, std::size_t limit) {
  std::ostringstream os;
  for (std::size_t i = 0; i < v.size() && i < limit; ++i) os << (i ? ", " : "") << v[i];
  if (v.size() > limit) os << ", ... (" << v.size() << " in all)";
  return os.str();
}

Tallies::Tallies(const CaseGeometry& g, OutputLayout layout) {
  per_seq.resize(static_cast<std::size_t>(g.num_seqs));
  per_head.resize(static_cast<std::size_t>(g.num_heads));
  if (has_partitions(layout)) {
    partitions_ = g.max_num_partitions;
    per_partition.resize(static_cast<std::size_t>(partitions_));
    per_seq_partition.resize(static_cast<std::size_t>(g.num_seqs) * static_cast<std::size_t>(partitions_));
  }
  if (layout == OutputLayout::token_head_dim) per_token.resize(g.token_seq.size());
}

void Tallies::add(const Coords& c, bool mismatch, bool is_nonfinite, bool is_nan, double abs_error) {
  auto bump = [&](std::vector<Tally>& v, std::int64_t i) {
    if (i < 0 || static_cast<std::size_t>(i) >= v.size()) return;
    Tally& t = v[static_cast<std::size_t>(i)];
    ++t.compared;
    t.mismatched += mismatch;
    t.nonfinite += is_nonfinite;
    t.nan += is_nonfinite && is_nan;
    if (std::isfinite(abs_error)) t.max_abs = std::max(t.max_abs, abs_error);
  };
  ++compared;
  mismatched += mismatch;
  nonfinite += is_nonfinite;
  bump(per_seq, c.seq);
  bump(per_head, c.head);
  if (c.partition >= 0) {
    bump(per_partition, c.partition);
    bump(per_seq_partition, static_cast<std::int64_t>(c.seq) * partitions_ + c.partition);
  }
  if (c.token >= 0) bump(per_token, c.token);
}

std::string to_string(Pattern p) {
  switch (p) {
    case Pattern::none:
      return "none";
    case Pattern::nan_inf:
      return "nan-inf";
    case Pattern::whole_head:
      return "whole-head";
    case Pattern::single_block:
      return "single-block";
    case Pattern::sequence_tail:
      return "sequence-tail";
    case Pattern::whole_partition:
      return "whole-partition";
    case Pattern::whole_sequence:
      return "whole-sequence";
    case Pattern::scattered:
      return "scattered";
    case Pattern::scale_ignored:
      return "scale-ignored";
    case Pattern::double_rounding:
      return "double-rounding";
    case Pattern::one_ulp:
      return "one-ulp";
    case Pattern::not_written:
      return "not-written";
    case Pattern::outside_slots:
      return "outside-slots";
    case Pattern::uniform_ratio:
      return "uniform-ratio";
    case Pattern::matches_variant:
      return "matches-variant";
    case Pattern::empty_sequence:
      return "empty-sequence";
    case Pattern::unused_slots:
      return "unused-slots";
    case Pattern::kv_head_mapping:
      return "kv-head-mapping";
    case Pattern::kv_group:
      return "kv-group";
    case Pattern::multi_partition:
      return "multi-partition";
    case Pattern::window_edge:
      return "window-edge";
    case Pattern::first_token:
      return "first-token";
    case Pattern::last_token:
      return "last-token";
    case Pattern::causal_mask:
      return "causal-mask";
    case Pattern::partial_block:
      return "partial-block";
    case Pattern::block_boundary:
      return "block-boundary";
    case Pattern::long_sequences:
      return "long-sequences";
  }
  return "?";
}

int specificity(Pattern p) {
  switch (p) {
    case Pattern::none:
      return 0;
    case Pattern::scattered:
      return 1;
    case Pattern::nan_inf:
      return 2;
    case Pattern::whole_sequence:
    case Pattern::whole_head:
      return 3;
    case Pattern::uniform_ratio:
      return 4;
    case Pattern::empty_sequence:
    case Pattern::unused_slots:
    case Pattern::kv_head_mapping:
    case Pattern::kv_group:
    case Pattern::multi_partition:
    case Pattern::window_edge:
    case Pattern::first_token:
    case Pattern::last_token:
    case Pattern::causal_mask:
    case Pattern::partial_block:
    case Pattern::block_boundary:
    case Pattern::long_sequences:
      return 5;
    case Pattern::single_block:  // the V2 partition or KV block to blame, more precise than a set of rows
    case Pattern::sequence_tail:
    case Pattern::whole_partition:
      return 6;
    case Pattern::scale_ignored:
    case Pattern::double_rounding:
    case Pattern::one_ulp:
    case Pattern::not_written:
    case Pattern::outside_slots:
    case Pattern::matches_variant:
      return 7;
  }
  return 0;
}

Verdict classify(const CaseGeometry& g, OutputLayout layout, const Tallies& t) {
  if (t.mismatched == 0) return {Pattern::none, "no mismatch"};
  if (auto v = empty_sequence_cause(g, t)) return *v;
  if (t.nonfinite > 0) {
    if (auto v = unused_slots_cause(g, layout, t)) return *v;
    std::ostringstream os;
    os << t.nonfinite << " NaN/Inf value" << (t.nonfinite > 1 ? "s" : "") << " where the golden is finite";
    return {Pattern::nan_inf, os.str()};
  }
  if (auto v = head_cause(g, t)) return *v;
  const auto heads = bad_indices(t.per_head);
  if (heads.size() < t.per_head.size() && mostly_wrong(t.per_head, heads))
    return {Pattern::whole_head, "head" + std::string(heads.size() > 1 ? "s " : " ") + index_list(heads) +
                                     " wrong almost everywhere; the other heads are clean"};
  if (has_partitions(layout)) {
    // A partition or block to blame pinpoints the bug; "the last partition" of some sequences is
    // implied by what they share (their partly filled last block, ...), which names it better.
    const auto located = partition_verdict(g, t);
    if (located && located->pattern != Pattern::sequence_tail) return *located;
    if (auto v = sequence_cause(g, layout, t)) {
      if (located) v->detail += "; by partition: " + located->detail;
      return *v;
    }
    if (located) return *located;
  } else if (layout == OutputLayout::token_head_dim) {
    if (auto v = token_cause(g, t)) return *v;
    if (auto v = token_verdict(g, t)) return *v;
  }
  if (auto v = sequence_cause(g, layout, t)) return *v;
  const auto seqs = bad_indices(t.per_seq);
  if (seqs.size() < t.per_seq.size() && mostly_wrong(t.per_seq, seqs)) {
    std::string detail = "seq" + std::string(seqs.size() > 1 ? "s " : " ") + index_list(seqs) +
                         " wrong in every head; the other sequences are clean";
    if (layout == OutputLayout::seq_head_dim) detail += " (diff the V2 partials to see which tokens)";
    return {Pattern::whole_sequence, detail};
  }
  std::ostringstream os;
  os << t.mismatched << " element" << (t.mismatched > 1 ? "s" : "") << " in " << seqs.size() << " seq"
     << (seqs.size() > 1 ? "s" : "") << " and " << heads.size() << " head" << (heads.size() > 1 ? "s" : "");
  return {Pattern::scattered, os.str()};
}

}  // namespace pao::diff

// Structural causes of a failing output (pao/diff/structure.hpp).
#include "pao/diff/structure.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>

namespace pao::diff {

namespace {

/// A set of rows a class of bug reaches, and what to say when the failing rows are that set.
struct Predicate {
  Pattern pattern;
  std::vector<bool> selected;  // per unit (sequence, new token or head)
  std::string what;            // "the sequences with 2+ V2 partitions"
  std::string rest;            // "the single-partition sequences pass"
  std::string advice;          // "the partials or the reduce"
};

enum class Fit : std::uint8_t { exact, nearly, within };

struct SetMatch {
  std::int64_t universe = 0, failing = 0, selected = 0, both = 0;
  Fit fit = Fit::exact;
};

/// Whether `failing` is `selected` over the units of `universe` (failing units outside it count
/// against the match): exactly; over 10+ units in 90% of each (nearly); or, with `within`, every
/// failing unit selected, 2+ of them, at least half the selection, the selection at most half the
/// units (a bug whose effect is below
/// the bound in some of the rows it reaches). A selection of none or every unit tells nothing apart.
std::optional<SetMatch> match(const std::vector<bool>& failing, const std::vector<bool>& selected,
                              const std::vector<bool>& universe, bool within = false) {
  SetMatch m;
  for (std::size_t i = 0; i < failing.size(); ++i) {
    m.failing += failing[i];
    if (!universe[i]) continue;
    ++m.universe;
    m.selected += selected[i];
    m.both += failing[i] && selected[i];
  }
  if (m.selected == 0 || m.selected == m.universe || m.failing == 0) return std::nullopt;
  if (m.both == m.failing && m.both == m.selected) return m;
  if (m.universe >= 10 && 10 * m.both >= 9 * m.selected && 10 * m.both >= 9 * m.failing) {
    m.fit = Fit::nearly;
    return m;
  }
  if (within && m.both == m.failing && m.both >= 2 && 2 * m.both >= m.selected &&
      2 * m.selected <= m.universe) {
    m.fit = Fit::within;
    return m;
  }
  return std::nullopt;
}

std::vector<std::int32_t> indices(const std::vector<bool>& v) {
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i]) out.push_back(static_cast<std::int32_t>(i));
  return out;
}

/// The first predicate the failing units match, worded (an exact or near match before one that
/// only contains them); other exact matches are listed after it.
std::optional<Verdict> first_match(const std::vector<Predicate>& predicates, const std::vector<bool>& failing,
                                   const std::vector<bool>& universe, const std::string& units,
                                   const std::string& unit) {
  for (const bool within : {false, true}) {
    std::optional<Verdict> verdict;
    std::string also;
    for (const auto& p : predicates) {
      const auto m = match(failing, p.selected, universe, within);
      if (!m || (within && m->fit != Fit::within)) continue;
      if (verdict) {
        if (m->fit == Fit::exact) also += (also.empty() ? "" : ", ") + to_string(p.pattern);
        continue;
      }
      std::ostringstream os;
      os << "the failing " << units
         << (m->fit == Fit::exact    ? " are exactly "
             : m->fit == Fit::nearly ? " are nearly "
                                     : " all lie among ")
         << p.what << " (" << unit << (m->failing > 1 ? "s " : " ") << index_list(indices(failing)) << ": "
         << m->failing << " of " << m->universe;
      if (m->fit != Fit::exact) os << "; " << m->both << " of the " << m->selected << " selected";
      os << "); " << (m->fit == Fit::within ? "no other fails" : p.rest) << ": " << p.advice;
      verdict = Verdict{p.pattern, os.str()};
    }
    if (verdict && !also.empty()) verdict->detail += " (the same set: " + also + ")";
    if (verdict) return verdict;
  }
  return std::nullopt;
}

std::vector<bool> failing_units(const std::vector<Tally>& tallies) {
  std::vector<bool> v(tallies.size());
  for (std::size_t i = 0; i < tallies.size(); ++i) v[i] = tallies[i].mismatched > 0;
  return v;
}

/// Every failing unit is wrong in at least half of its elements.
bool mostly_wrong(const std::vector<Tally>& tallies) {
  return std::all_of(tallies.begin(), tallies.end(),
                     [](const Tally& t) { return t.mismatched == 0 || 2 * t.mismatched >= t.compared; });
}

std::vector<bool> select(std::size_t n, const std::function<bool(std::int32_t)>& f) {
  std::vector<bool> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = f(static_cast<std::int32_t>(i));
  return v;
}

/// The sequences of `min_len` tokens or more fail and no shorter one, 2+ of them, and the error of
/// the longest failing sequence is at least 1.5x that of the shortest: the error grows with length.
std::optional<Verdict> long_sequences(const CaseGeometry& g, const std::vector<Tally>& per_seq,
                                      const std::vector<bool>& universe) {
  std::int32_t shortest = -1, longest = -1;  // the failing sequences of fewest / most tokens
  for (std::int32_t s = 0; s < g.num_seqs; ++s) {
    if (per_seq[static_cast<std::size_t>(s)].mismatched == 0) continue;
    const std::int32_t len = g.seq_lens[static_cast<std::size_t>(s)];
    if (shortest < 0 || len < g.seq_lens[static_cast<std::size_t>(shortest)]) shortest = s;
    if (longest < 0 || len > g.seq_lens[static_cast<std::size_t>(longest)]) longest = s;
  }
  if (shortest < 0) return std::nullopt;
  const std::int32_t min_len = g.seq_lens[static_cast<std::size_t>(shortest)];
  const auto selected = select(
      per_seq.size(), [&](std::int32_t s) { return g.seq_lens[static_cast<std::size_t>(s)] >= min_len; });
  const auto m = match(failing_units(per_seq), selected, universe);
  const double low = per_seq[static_cast<std::size_t>(shortest)].max_abs;
  const double high = per_seq[static_cast<std::size_t>(longest)].max_abs;
  if (!m || m->fit != Fit::exact || m->failing < 2 || !(high >= 1.5 * low) ||
      g.seq_lens[static_cast<std::size_t>(longest)] == min_len)
    return std::nullopt;
  std::ostringstream os;
  os.precision(3);
  os << "the failing sequences are exactly those of " << min_len << " tokens or more (" << m->failing
     << " of " << m->universe << "), and the error grows with length (max |error| " << low << " at "
     << min_len << " tokens, " << high << " at " << g.seq_lens[static_cast<std::size_t>(longest)]
     << "); the shorter sequences pass: an accumulation that loses precision with length (a sum kept in "
        "f16 / bf16, an unrescaled running max)";
  return Verdict{Pattern::long_sequences, os.str()};
}

}  // namespace

std::optional<Verdict> empty_sequence_cause(const CaseGeometry& g, const Tallies& t) {
  const auto empty =
      select(t.per_seq.size(), [&](std::int32_t s) { return g.seq_lens[static_cast<std::size_t>(s)] == 0; });
  const std::vector<bool> all(empty.size(), true);
  const auto m = match(failing_units(t.per_seq), empty, all);
  if (!m || m->fit != Fit::exact) return std::nullopt;
  std::ostringstream os;
  os << "the failing sequences are exactly the empty ones (seq" << (m->failing > 1 ? "s " : " ")
     << index_list(indices(empty)) << ": " << m->failing << " of " << m->universe << ", "
     << (t.nonfinite > 0 ? "NaN/Inf" : "not 0")
     << "); the others pass: a sequence of no token must give 0 (vLLM's kernels write 0), not read a "
        "partition nothing wrote (its max-logit and exp-sum)";
  return Verdict{Pattern::empty_sequence, os.str()};
}

std::optional<Verdict> unused_slots_cause(const CaseGeometry& g, OutputLayout layout, const Tallies& t) {
  if (!g.poison_unused || t.nonfinite == 0) return std::nullopt;
  const std::int64_t row_length = layout == OutputLayout::seq_head_partition ? 1 : g.head_size;
  std::vector<std::int32_t> nan_seqs;
  std::int32_t partly_filled = 0, non_empty = 0;
  bool on_boundary = false;  // a NaN sequence that ends on a block boundary: no slot past its end to read
  for (std::int32_t s = 0; s < g.num_seqs; ++s) {
    const std::int32_t len = g.seq_lens[static_cast<std::size_t>(s)];
    const bool partial = len % g.block_size != 0;
    partly_filled += partial;
    non_empty += len > 0;
    const Tally& seq = t.per_seq[static_cast<std::size_t>(s)];
    if (seq.nonfinite == 0) continue;
    // A poisoned slot read poisons whole rows (every dim of the head's accumulator) with NaN,
    // never a lone element nor an Inf.
    if (len == 0 || seq.nan != seq.nonfinite || seq.nonfinite % row_length != 0) return std::nullopt;
    on_boundary = on_boundary || !partial;
    nan_seqs.push_back(s);
  }
  if (nan_seqs.empty()) return std::nullopt;
  std::ostringstream os;
  const char* regenerate =
      "; regenerate the case with \"poison_unused\": false to see the numeric verdict underneath";
  // Reading past seq_len is what a kernel does to every sequence with unused slots in its last
  // block; NaN in some of them only is rather a wrong block read (a poisoned spare block).
  if (!on_boundary && static_cast<std::int32_t>(nan_seqs.size()) == partly_filled) {
    os << "NaN only in sequences whose last block is partly filled (seq" << (nan_seqs.size() > 1 ? "s " : " ")
       << index_list(nan_seqs) << ": every one of the " << partly_filled
       << "), and the golden's unused cache slots hold NaN: the kernel reads slots past "
          "seq_len "
          "(an unmasked load, p = 0 times NaN in P.V)"
       << regenerate;
    return Verdict{Pattern::unused_slots, os.str()};
  }
  // Sequences that end on a block boundary have no slot past their end in their own blocks: NaN
  // in every sequence means slots of blocks no sequence owns were read.
  if (!on_boundary || static_cast<std::int32_t>(nan_seqs.size()) != non_empty) return std::nullopt;
  os << "NaN in whole rows of every sequence (" << non_empty
     << "), those ending on a block boundary too, and the golden's unused cache slots hold NaN: the kernel "
        "reads slots of blocks no sequence owns (P.V over the whole pool, p = 0 times NaN)"
     << regenerate;
  return Verdict{Pattern::unused_slots, os.str()};
}

std::optional<Verdict> head_cause(const CaseGeometry& g, const Tallies& t) {
  const std::int32_t G = g.group_size();
  if (G < 2 || !mostly_wrong(t.per_head)) return std::nullopt;
  const auto failing = failing_units(t.per_head);
  const std::vector<bool> all(failing.size(), true);
  std::vector<Predicate> predicates;
  if (g.num_kv_heads > 1)
    predicates.push_back(
        {Pattern::kv_head_mapping,
         select(failing.size(), [&](std::int32_t h) { return h % g.num_kv_heads != h / G; }),
         "the heads that head % num_kv_heads maps to another KV head than head / group (" +
             std::to_string(G) + ")",
         "the others pass",
         "the kernel maps query heads to KV heads by modulo instead of by group (or permutes "
         "the heads)"});
  // Whole KV groups: every head of a group failing, every head of the others clean.
  std::vector<bool> groups(failing.size());
  std::vector<std::int32_t> kv_heads;
  for (std::int32_t k = 0; k < g.num_kv_heads; ++k) {
    bool whole = true;
    for (std::int32_t h = k * G; h < (k + 1) * G; ++h) whole = whole && failing[static_cast<std::size_t>(h)];
    if (!whole) continue;
    kv_heads.push_back(k);
    for (std::int32_t h = k * G; h < (k + 1) * G; ++h) groups[static_cast<std::size_t>(h)] = true;
  }
  if (!kv_heads.empty())
    predicates.push_back({Pattern::kv_group, groups,
                          "the whole group" + std::string(kv_heads.size() > 1 ? "s" : "") + " of KV head" +
                              (kv_heads.size() > 1 ? "s " : " ") + index_list(kv_heads) + " (" +
                              std::to_string(G) + " query heads each)",
                          "the other groups pass",
                          "that KV head's cache is read wrongly (its offset or stride in the cache)"});
  return first_match(predicates, failing, all, "heads", "head");
}

std::optional<Verdict> token_cause(const CaseGeometry& g, const Tallies& t) {
  const std::size_t n = t.per_token.size();
  if (n == 0) return std::nullopt;
  const auto seq_of = [&](std::int32_t tok) { return g.token_seq[static_cast<std::size_t>(tok)]; };
  const auto index = [&](std::int32_t tok) {  // among its sequence's new tokens
    return tok - g.query_start_loc[static_cast<std::size_t>(seq_of(tok))];
  };
  const auto position = [&](std::int32_t tok) { return g.context_len(seq_of(tok)) + index(tok); };
  const auto last = [&](std::int32_t tok) { return index(tok) == g.query_len(seq_of(tok)) - 1; };
  std::vector<Predicate> p;
  p.push_back({Pattern::last_token, select(n, last), "the last new token of each sequence",
               "every earlier new token passes",
               "the last key is lost or misplaced (the end of the causal range: seq_len, or the query's own "
               "position, off by one)"});
  p.push_back({Pattern::causal_mask, select(n, [&](std::int32_t tok) { return !last(tok); }),
               "every new token but each sequence's last", "the last ones pass",
               "the causal mask lets a query see a later new token (the last token has none to see)"});
  p.push_back({Pattern::first_token, select(n, [&](std::int32_t tok) { return index(tok) == 0; }),
               "the first new token of each sequence", "the later ones pass",
               "the first query row of each sequence (query_start_loc, the context / new-token boundary)"});
  const std::int32_t W = g.sliding_window;
  if (W > 0) {
    const std::string edge = "the window's edge (position - W + 1, W = " + std::to_string(W) + ")";
    p.push_back(
        {Pattern::window_edge, select(n, [&](std::int32_t tok) { return position(tok) >= W; }),
         "the new tokens whose window starts inside the sequence (position >= " + std::to_string(W) + ")",
         "the tokens that see their whole prefix pass", edge + " is applied wrongly"});
    p.push_back({Pattern::window_edge, select(n, [&](std::int32_t tok) { return position(tok) >= W - 1; }),
                 "the new tokens whose window reaches the sequence's start (position >= W - 1 = " +
                     std::to_string(W - 1) + ")",
                 "the tokens nearer the start pass", edge + " is applied wrongly"});
  }
  const std::int32_t B = g.block_size;
  p.push_back({Pattern::block_boundary, select(n, [&](std::int32_t tok) { return position(tok) % B == 0; }),
               "the new tokens at the first slot of a KV block (position % block_size == 0, block_size " +
                   std::to_string(B) + ")",
               "the others pass", "a token's block or slot is computed off by one at the block boundary"});
  p.push_back({Pattern::block_boundary,
               select(n, [&](std::int32_t tok) { return position(tok) % B == B - 1; }),
               "the new tokens at the last slot of a KV block (position % block_size == block_size - 1)",
               "the others pass", "a token's block or slot is computed off by one at the block boundary"});
  return first_match(p, failing_units(t.per_token), std::vector<bool>(n, true), "new tokens", "token");
}

std::optional<Verdict> sequence_cause(const CaseGeometry& g, OutputLayout layout, const Tallies& t) {
  const std::size_t n = t.per_seq.size();
  const auto len = [&](std::int32_t s) { return g.seq_lens[static_cast<std::size_t>(s)]; };
  // Empty sequences attend nothing: their zeros tell nothing apart.
  const auto universe = select(
      n, [&](std::int32_t s) { return len(s) > 0 && t.per_seq[static_cast<std::size_t>(s)].compared > 0; });
  std::vector<Predicate> p;
  if (g.partitioned() && layout != OutputLayout::token_head_dim)
    p.push_back({Pattern::multi_partition, select(n, [&](std::int32_t s) { return g.partitions_of(s) >= 2; }),
                 "the sequences with 2+ V2 partitions (seq_len > partition_size " +
                     std::to_string(g.partition_size) + ")",
                 "the single-partition sequences pass",
                 has_partitions(layout)
                     ? "the partial kernel's handling of 2+ partitions (a partition's bounds, "
                       "its slot, the tokens it reads)"
                     : "the partials or the reduce (diff tmp_out, max_logits and exp_sums with "
                       "--reduce to tell which)"});
  const std::int32_t W = g.sliding_window;
  if (W > 0 && layout != OutputLayout::token_head_dim) {
    const std::string advice = "the sliding window is applied wrongly (its edge off by one, or ignored)";
    p.push_back({Pattern::window_edge, select(n, [&](std::int32_t s) { return len(s) > W; }),
                 "the sequences longer than the sliding window (" + std::to_string(W) + " tokens)",
                 "the shorter ones pass", advice});
    p.push_back({Pattern::window_edge, select(n, [&](std::int32_t s) { return len(s) >= W; }),
                 "the sequences that reach the sliding window (" + std::to_string(W) + " tokens or more)",
                 "the shorter ones pass", advice});
  }
  if (layout != OutputLayout::token_head_dim)
    p.push_back({Pattern::first_token, select(n, [&](std::int32_t s) { return len(s) == 1; }),
                 "the one-token sequences", "the longer ones pass",
                 "a softmax over a single token (its max is its only logit, its exp_sum 1)"});
  const std::int32_t B = g.block_size;
  p.push_back({Pattern::partial_block, select(n, [&](std::int32_t s) { return len(s) % B != 0; }),
               "the sequences whose last block is partly filled (seq_len % block_size != 0, block_size " +
                   std::to_string(B) + ")",
               "those that end on a block boundary pass",
               "the partly filled last block (a block count rounded down, a wrong end-of-sequence mask)"});
  p.push_back({Pattern::block_boundary, select(n, [&](std::int32_t s) { return len(s) % B == 0; }),
               "the sequences that end exactly on a block boundary (seq_len % block_size == 0, block_size " +
                   std::to_string(B) + ")",
               "those that end mid-block pass",
               "the full last block (an off-by-one in the block count or the end-of-sequence mask)"});
  if (auto v = first_match(p, failing_units(t.per_seq), universe, "sequences", "seq")) return v;
  return long_sequences(g, t.per_seq, universe);
}

}  // namespace pao::diff

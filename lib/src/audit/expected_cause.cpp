// The cause each bug should be named by (pao/audit/expected_cause.hpp).
#include "pao/audit/expected_cause.hpp"

#include <algorithm>

#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"

namespace pao::audit {

using diff::Pattern;

namespace {

/// What the case's sequences are like, as the causes' predicates see them.
struct SequenceShape {
  bool one_partition = false;   // a non-empty sequence of one V2 partition
  bool two_partitions = false;  // a sequence of 2+ partitions
  bool on_boundary = false;     // a non-empty sequence ending on a block boundary
  bool several_new = false;     // prefix: a sequence of 2+ new tokens
};

SequenceShape shape_of(const cases::Case& c) {
  SequenceShape s;
  for (const std::int32_t len : c.seq_lens) {
    if (len == 0) continue;
    (partitions_of_sequence(len, c.partition_size) >= 2 ? s.two_partitions : s.one_partition) = true;
    s.on_boundary = s.on_boundary || len % c.block_size == 0;
  }
  s.several_new =
      std::any_of(c.query_lens.begin(), c.query_lens.end(), [](std::int32_t q) { return q >= 2; });
  return s;
}

const char* kEveryRow = "it changes every row alike: no structure tells the wrong rows from the right ones";

}  // namespace

bool ExpectedCause::named_by(Pattern p) const {
  return std::find(patterns.begin(), patterns.end(), p) != patterns.end();
}

ExpectedCause expected_cause(const Mutation& m, const cases::Case& c, bool out_only) {
  const std::string& n = m.name;
  const SequenceShape s = shape_of(c);
  const bool prefix = kinds::kind_of(c).traits().new_tokens;
  const char* no_single = "no non-empty sequence has a single V2 partition: every row has 2+";
  if (n == "last_token_dropped") {
    if (prefix)
      return {{Pattern::last_token},
              s.several_new ? "" : "each sequence has one new token: its last is every row"};
    return {{Pattern::sequence_tail},
            out_only            ? "out alone: every sequence loses its last token, every row changes"
            : !s.two_partitions ? "no sequence has 2+ V2 partitions: the last partition is every partition"
                                : ""};
  }
  if (n == "window_plus_one" || n == "window_minus_one")
    return {{Pattern::matches_variant, Pattern::window_edge}, ""};
  if (n == "causal_off_by_one") return {{Pattern::causal_mask, Pattern::matches_variant}, ""};
  if (n == "alibi_missing") return {{Pattern::matches_variant}, ""};
  if (n == "zero_point_ignored") return {{Pattern::matches_variant}, ""};
  if (n == "k_scale_ignored" || n == "v_scale_ignored")
    return {{Pattern::matches_variant, Pattern::uniform_ratio}, ""};
  if (n == "gqa_head_mapping") return {{Pattern::kv_head_mapping}, ""};
  if (n == "partition_boundary_off_by_one" || n == "partials_swapped")
    return {{Pattern::multi_partition, Pattern::whole_partition},
            s.one_partition || !out_only ? "" : no_single};
  if (n == "reduce_without_max_rescaling")
    return {{Pattern::multi_partition}, s.one_partition ? "" : no_single};
  if (n == "nan_leak") return {{Pattern::unused_slots}, ""};
  if (n == "partial_block_dropped")
    return {{Pattern::partial_block},
            s.on_boundary ? "" : "no sequence ends on a block boundary: every sequence loses its last block"};
  return {{}, kEveryRow};  // alibi_sign_flipped, softmax_scale_log2e, block_table_off_by_one,
                           // fp8_other_format, quant_params_of_neighbour, integer_sign_confused,
                           // u4_nibbles_swapped
}

}  // namespace pao::audit

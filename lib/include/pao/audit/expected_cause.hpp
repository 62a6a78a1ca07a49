// The cause `pao diff` should name for each bug of the mutation library: the patterns that say
// it (a structural cause — the sequences with 2+ partitions, the last new token, the heads that
// head % num_kv_heads maps elsewhere — or a convention matched from the values), and whether the
// case lets the bug show one at all. A bug that changes every row alike (a wrong softmax scale,
// ALiBi's sign) leaves no structure to name; `pao audit` counts the right cause named over the
// caught (bug, case) pairs where one exists.
#pragma once

#include <string>
#include <vector>

#include "pao/audit/mutations.hpp"
#include "pao/cases/case.hpp"
#include "pao/diff/pattern.hpp"

namespace pao::audit {

struct ExpectedCause {
  std::vector<diff::Pattern> patterns;  // any of them names the bug's cause
  std::string absent;                   // why the case shows no cause of the bug ("" when it does)
  bool named_by(diff::Pattern p) const;
};

/// For a bug `m` on case `c`; `out_only`: the vendor hands over `out` alone (no V2 partials).
ExpectedCause expected_cause(const Mutation& m, const cases::Case& c, bool out_only);

}  // namespace pao::audit

// `pao verify`: is a golden sound? Three checks, each stronger and slower than the last:
//   hash        the manifest's sha256 (golden/integrity.hpp), when the folder has a manifest
//   metadata    the flat `__metadata__` keys harnesses read (scale, kernel, sizes, ...) are what
//               the case gives, and format_version is the one this pao writes
//   invariants  the invariants of attention (golden/invariants.hpp), always
//   recompute   the golden rebuilt from its case (seeded inputs, both precisions) equals the file
//               tensor by tensor, bit for bit — optional: it costs what `pao golden` costs
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pao/golden/folder.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/invariants.hpp"

namespace pao::golden {

struct GoldenCheck {
  std::string id;
  std::filesystem::path path;
  std::optional<HashMismatch> hash;              // set: the file differs from its manifest entry
  bool hashed = false;                           // a manifest entry was there to check against
  std::vector<std::string> metadata_mismatches;  // "'scale' is \"0.5\", but the case gives ..."
  InvariantReport invariants;
  bool recomputed = false;
  std::vector<std::string> recompute_mismatches;  // "v2.tmp_out: 3 of 4096 elements differ, first at [...]"
  std::string error;                              // unreadable, not a golden, ...

  bool ok() const {
    return !hash && metadata_mismatches.empty() && invariants.ok() && recompute_mismatches.empty() &&
           error.empty();
  }
};

/// Checks one golden of `folder` (its manifest entry, if any, gives the hash).
GoldenCheck verify_golden(const GoldenFolder& folder, const GoldenRef& ref, bool recompute);

/// The flat metadata keys of `file` that differ from what golden_metadata(its case) writes, or are
/// missing; a format_version other than kGoldenFormatVersion. Empty when all agree.
std::vector<std::string> metadata_mismatches(const TensorFile& file);

/// Tensor by tensor, bit for bit: the golden as make_golden(case) writes it now against the file.
std::vector<std::string> recompute_mismatches(const TensorFile& file);

}  // namespace pao::golden

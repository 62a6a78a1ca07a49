// Shards: one machine's share of a suite. Shard i of N holds the cases at positions i mod N of
// the suite's order, so N machines split a sweep deterministically and the costs of long and
// short cases mix. `pao golden --shard auto` takes i and N from the job array of a cluster
// engine (docs/cluster.md): Slurm job arrays or Kubernetes Indexed Jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/cases/case.hpp"

namespace pao::cases {

struct Shard {
  std::int32_t index = 0;
  std::int32_t count = 1;
};

/// Parses "i/N". Throws pao::Error unless 0 <= i < N.
Shard parse_shard(std::string_view text);
std::vector<Case> select_shard(const std::vector<Case>& cases, const Shard& shard);

/// A variable of the environment, or nullptr when unset (std::getenv, or a test's table).
using EnvironmentLookup = std::function<const char*(const char*)>;

/// This task's shard from a cluster's job-array environment:
///   Slurm (sbatch --array=0-N-1 or any MIN-MAX with step 1): SLURM_ARRAY_TASK_ID, and
///     SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN / SLURM_ARRAY_TASK_MAX; i = ID - MIN;
///   Kubernetes Indexed Job: JOB_COMPLETION_INDEX, with N in PAO_SHARD_COUNT (the Job's
///     `completions`, which Kubernetes does not export).
/// Throws pao::Error naming the variables when neither is set, one is not a number, the array has
/// a step or holes, or the index falls outside [0, N).
Shard shard_from_environment(const EnvironmentLookup& getenv);

/// `pao golden --shard`: "i/N", or "auto" for shard_from_environment(std::getenv).
Shard resolve_shard(std::string_view text);

/// Inclusive ranges [first, last] of shard indices, ascending.
using ShardRanges = std::vector<std::pair<std::int32_t, std::int32_t>>;

/// The indices of [0, count) that `present` (ascending, each inside [0, count)) lacks, as ranges:
/// a million missing shards are one range, never a million numbers.
ShardRanges missing_shard_ranges(const std::vector<std::int32_t>& present, std::int32_t count);

/// "5-999999", "1, 3, 6-7": the first `max_shown` ranges, then ", ... (R ranges)".
std::string shard_ranges_text(const ShardRanges& ranges, std::size_t max_shown = 4);

}  // namespace pao::cases

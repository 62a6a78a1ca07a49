// Shards of a suite, given or from a cluster's job-array environment (pao/cases/shard.hpp).
#include "pao/cases/shard.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>

#include "pao/core/error.hpp"

namespace pao::cases {

namespace {

bool parse_int(std::string_view part, std::int32_t& out) {
  const auto res = std::from_chars(part.data(), part.data() + part.size(), out);
  return res.ec == std::errc() && res.ptr == part.data() + part.size() && !part.empty();
}

/// The integer value of a variable, nullopt when unset; an error when it is not an integer.
std::optional<std::int32_t> env_int(const EnvironmentLookup& getenv, const char* name) {
  const char* value = getenv(name);
  if (value == nullptr) return std::nullopt;
  std::int32_t v = 0;
  require(parse_int(value, v), "--shard auto: ", name, " = '", value, "' is not an integer");
  return v;
}

Shard checked(Shard s, const std::string& source) {
  require(s.count >= 1 && s.index >= 0 && s.index < s.count, "--shard auto: ", source, " gives shard ",
          s.index, " of ", s.count, ", outside 0 <= i < N");
  return s;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  Shard shard;
  if (slash == std::string_view::npos || !parse_int(text.substr(0, slash), shard.index) ||
      !parse_int(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 0 ||
      shard.index >= shard.count)
    fail("--shard ", text,
         ": expected i/N with 0 <= i < N (e.g. 0/4 ... 3/4, as a Slurm array index), or auto (from "
         "SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX; docs/cluster.md)");
  return shard;
}

std::vector<Case> select_shard(const std::vector<Case>& cases, const Shard& shard) {
  std::vector<Case> out;
  for (std::size_t k = static_cast<std::size_t>(shard.index); k < cases.size();
       k += static_cast<std::size_t>(shard.count))
    out.push_back(cases[k]);
  return out;
}

Shard shard_from_environment(const EnvironmentLookup& getenv) {
  if (const auto id = env_int(getenv, "SLURM_ARRAY_TASK_ID")) {
    const auto count = env_int(getenv, "SLURM_ARRAY_TASK_COUNT");
    const auto min = env_int(getenv, "SLURM_ARRAY_TASK_MIN"), max = env_int(getenv, "SLURM_ARRAY_TASK_MAX");
    const auto step = env_int(getenv, "SLURM_ARRAY_TASK_STEP");
    require(!step || *step == 1, "--shard auto: SLURM_ARRAY_TASK_STEP = ", *step,
            ": the array has gaps, so its task ids are not shard indices; use --array=MIN-MAX (step 1), or "
            "--shard i/N");
    require(count || (min && max),
            "--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT "
            "nor SLURM_ARRAY_TASK_MIN/MAX: how many shards there are is unknown");
    const std::int32_t first = min.value_or(0);
    const std::int32_t n = count ? *count : *max - *min + 1;
    require(!count || !min || !max || *count == *max - *min + 1,
            "--shard auto: SLURM_ARRAY_TASK_COUNT = ", *count, " but the array runs ", *min, "-", *max,
            ": a list of task ids (--array=0,3,7) is not a shard "
            "range; use --array=MIN-MAX");
    return checked(Shard{*id - first, n}, "SLURM_ARRAY_TASK_ID = " + std::to_string(*id));
  }
  if (const auto index = env_int(getenv, "JOB_COMPLETION_INDEX")) {
    const auto count = env_int(getenv, "PAO_SHARD_COUNT");
    require(count.has_value(),
            "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but "
            "PAO_SHARD_COUNT is not: set it to the Job's completions (docs/cluster.md)");
    return checked(Shard{*index, *count}, "JOB_COMPLETION_INDEX = " + std::to_string(*index));
  }
  fail(
      "--shard auto: no job array in the environment: neither SLURM_ARRAY_TASK_ID (Slurm, sbatch --array) "
      "nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --shard i/N instead");
}

ShardRanges missing_shard_ranges(const std::vector<std::int32_t>& present, std::int32_t count) {
  ShardRanges out;
  std::int64_t next = 0;  // the first index not yet accounted for
  for (const std::int32_t i : present) {
    if (i > next) out.emplace_back(static_cast<std::int32_t>(next), i - 1);
    next = std::max<std::int64_t>(next, std::int64_t{i} + 1);
  }
  if (next < count) out.emplace_back(static_cast<std::int32_t>(next), count - 1);
  return out;
}

std::string shard_ranges_text(const ShardRanges& ranges, std::size_t max_shown) {
  std::string s;
  for (std::size_t k = 0; k < ranges.size() && k < max_shown; ++k) {
    const auto [first, last] = ranges[k];
    if (k > 0) s += ", ";
    s += std::to_string(first);
    if (last > first) {
      s += '-';  // appended apart: GCC 12's -Wrestrict misfires on "-" + std::to_string(...)
      s += std::to_string(last);
    }
  }
  if (ranges.size() > max_shown) s += ", ... (" + std::to_string(ranges.size()) + " ranges)";
  return s;
}

Shard resolve_shard(std::string_view text) {
  if (text == "auto") return shard_from_environment([](const char* name) { return std::getenv(name); });
  return parse_shard(text);
}

}  // namespace pao::cases

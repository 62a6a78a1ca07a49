// Generating a list of goldens into a folder: `jobs` cases at a time, resumable (a case whose
// manifest entry has the same parameters, pao version and format, and whose file still has the
// recorded sha256, is skipped), the manifest rewritten atomically after every case so that an
// interrupted run resumes where it stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pao/golden/manifest.hpp"
#include "pao/golden/output_selection.hpp"

namespace pao::golden {

struct GoldenEvent {
  enum class Kind : std::uint8_t { started, written, skipped, failed };
  Kind kind = Kind::started;
  std::size_t index = 0;  // position in the run's case list
  const cases::Case* golden_case = nullptr;
  double cost = 0;          // estimated_cost of the case
  std::uint64_t bytes = 0;  // written / skipped
  double seconds = 0;       // written / failed: time spent on the case
  std::string message;      // failed: the error
};

struct GoldenRunOptions {
  std::filesystem::path out_dir;
  GoldenFormat format = GoldenFormat::safetensors;
  std::int32_t jobs = 1;  // cases generated at once; each uses OMP threads / jobs threads
  bool force = false;     // regenerate even up-to-date cases
  std::string suite;      // recorded in the manifest
  bool full = false;
  std::optional<cases::Shard> shard;  // picks the manifest's name
  /// The ids of the whole run before sharding (Manifest::suite_cases); empty: the ids of `cases`.
  std::vector<std::string> suite_cases;
  OutputSelection outputs;  // which outputs each golden holds (--outputs)
  /// The command-line flags that shaped the goldens ("--partition-size 256 --outputs exact"):
  /// recorded in the manifest for the regenerate hint.
  std::string golden_flags;
  /// Called for every event, one call at a time.
  std::function<void(const GoldenEvent&)> on_event;
};

struct GoldenRunResult {
  std::size_t written = 0;
  std::size_t skipped = 0;
  std::size_t stale_temporaries_removed = 0;                  // left in the folder by a killed run
  bool manifest_restarted = false;                            // --force over an unreadable manifest
  std::vector<std::pair<std::string, std::string>> failures;  // case id, error
  std::filesystem::path manifest_path;
};

/// Throws pao::Error for duplicate ids, an unusable output folder or a malformed existing
/// manifest; errors of single cases are collected in `failures` and the others still run.
GoldenRunResult run_golden(const std::vector<cases::Case>& cases, const GoldenRunOptions& options);

}  // namespace pao::golden

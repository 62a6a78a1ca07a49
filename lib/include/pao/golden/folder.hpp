// The cases of a golden folder: the entries of its manifest.json; without one, the union of its
// shard manifests (manifest-shard-i-of-N.json, shards still being written or not yet merged); with
// none, every <id>.safetensors file and npy folder in it whose metadata names a case. And whether
// the folder is complete: the cases its run(s) should have written that it lacks (a killed or
// disk-full `pao golden`, a shard that has not run). `pao diff` and `pao verify` read folders
// through it and refuse an incomplete one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pao/cases/shard.hpp"
#include "pao/golden/manifest.hpp"

namespace pao::golden {

struct GoldenRef {
  std::string id;
  std::filesystem::path path;
};

struct MissingCase {
  std::string id;
  std::string command;  // the pao golden command that writes it (it resumes: only what is missing)
};

struct GoldenFolder {
  std::filesystem::path dir;
  /// DIR/manifest.json when there is one; else the union of the shard manifests (shard unset).
  std::optional<Manifest> manifest;
  std::vector<GoldenRef> cases;  // manifest order, else sorted by file name
  /// The cases the manifest(s) say the folder's run holds (Manifest::suite_cases) that it does not
  /// hold, in the suite's order.
  std::vector<MissingCase> missing;
  /// Read from shard manifests: the shards of the N that have no manifest (every shard writes
  /// one, even one that holds no case), how many, and the command that writes the first.
  cases::ShardRanges missing_shards;
  std::int64_t missing_shard_count = 0;
  std::int32_t shard_count = 0;
  std::string missing_shard_command;
  /// Why completeness could not be checked ("" when it was): no manifest, or one written by a pao
  /// that did not record its suite's cases.
  std::string completeness_unknown;
};

/// Throws pao::Error naming the folder when it holds no goldens, or a manifest is malformed, or
/// two shard manifests disagree.
GoldenFolder list_goldens(const std::filesystem::path& dir);

/// Throws pao::Error (bad input: exit 2) when `folder` lacks cases of its run: how many, the first
/// few ids and the commands that write them; or, read from shard manifests, lacks the manifest of
/// a shard (docs/golden.md: a shard missing is refused, as --merge-manifests refuses it). With a
/// non-empty `glob` (`pao diff --cases`: a subset on purpose) only missing cases whose id matches
/// it count.
void require_complete(const GoldenFolder& folder, const std::string& glob = "");

/// Every golden file `golden` (a folder of cases, a .safetensors file or an npy folder) reads, as
/// its manifest or folder names them: each case's .safetensors file; an npy folder, its meta.json
/// and every file in it. What an output must not be (refuse_output_over_input resolves each, links
/// included): a folder without manifest may hold links to goldens elsewhere. Empty when `golden`
/// does not exist; throws pao::Error as list_goldens does for a malformed folder.
std::vector<std::filesystem::path> golden_input_files(const std::filesystem::path& golden);
/// The same for a folder already listed.
std::vector<std::filesystem::path> golden_input_files(const GoldenFolder& folder);

/// One golden file or npy folder as a folder of one case: its id, and its folder's manifest when
/// that lists it (so that its hash can be checked). Throws pao::Error if it is not a pao golden.
GoldenFolder golden_of_one(const std::filesystem::path& golden);

}  // namespace pao::golden

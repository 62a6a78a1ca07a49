// The manifest of a golden folder: one entry per case (id, file, sha256, size, format, the pao
// version that wrote it, the case's canonical JSON and the outputs it holds). A plain run writes
// DIR/manifest.json; shard i of N writes DIR/manifest-shard-i-of-N.json, and merge_shard_manifests folds all
// N into DIR/manifest.json once every shard is done. Manifests are written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pao/cases/suite.hpp"
#include "pao/golden/writer.hpp"

namespace pao::golden {

struct ManifestEntry {
  std::string id;
  std::string kernel;
  std::string file;  // relative to the manifest's folder
  GoldenFormat format = GoldenFormat::safetensors;
  std::string sha256;
  std::uint64_t bytes = 0;
  std::string pao_version;
  std::string parameters;       // case_to_json(case): canonical, one line
  std::string outputs = "all";  // to_string(OutputSelection): the outputs the file holds
};

struct Manifest {
  std::string suite;  // empty for --case runs
  bool full = false;
  std::optional<cases::Shard> shard;
  std::string
      golden_flags;  // pao golden's flags that shape the goldens ("--partition-size 256 --outputs exact")
  std::vector<ManifestEntry> entries;  // sorted by id
  /// The ids of every case of the run the folder belongs to, in the suite's order, before any
  /// sharding (a shard holds those at positions shard.index mod shard.count): what a complete
  /// folder holds. Empty in manifests written before pao recorded it (completeness unknown).
  std::vector<std::string> suite_cases;

  const ManifestEntry* find(const std::string& id) const;
  /// Inserts or replaces the entry with e.id, keeping the order.
  void upsert(ManifestEntry e);
  /// Appends to suite_cases the ids it lacks, in their order: a folder that grows by several runs,
  /// or the shards of one suite, expect all of them.
  void expect_cases(const std::vector<std::string>& ids);
};

/// "manifest.json", or "manifest-shard-<i>-of-<N>.json".
std::string manifest_file_name(const std::optional<cases::Shard>& shard);

/// Throws pao::Error naming the file for unreadable or malformed manifests.
Manifest read_manifest(const std::filesystem::path& path);
void write_manifest(const std::filesystem::path& path, const Manifest& manifest);

/// DIR's shard manifests (manifest-shard-<i>-of-<N>.json) by shard index; none: empty. Throws
/// pao::Error if they are of different shard counts, or one is malformed.
std::map<std::int32_t, Manifest> read_shard_manifests(const std::filesystem::path& dir);

/// Shard manifests as one manifest without a shard: their entries and suite_cases. Throws
/// pao::Error if they disagree on the suite, --full or the flags, or two hold one id with different
/// contents.
Manifest union_of_shards(const std::map<std::int32_t, Manifest>& shards);

/// Folds DIR/manifest-shard-*-of-N.json into DIR/manifest.json (entries of an existing
/// manifest.json that no shard holds are kept). Throws pao::Error if the shards disagree on N or
/// on the suite, if a shard is missing, or if two shards hold one id with different contents.
Manifest merge_shard_manifests(const std::filesystem::path& dir);

}  // namespace pao::golden

// Is a golden on disk the one pao wrote? Its manifest entry's sha256 against the file's (an npy
// golden: its meta.json's, and every .npy file's against the sha256 meta.json lists). `pao golden`
// uses it to skip up-to-date cases, `pao diff` refuses a golden that fails it, `pao verify`
// reports it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "pao/golden/folder.hpp"
#include "pao/golden/manifest.hpp"

namespace pao::golden {

struct HashMismatch {
  std::filesystem::path file;  // the file that differs (an npy golden's meta.json or one .npy)
  std::string expected;        // what the manifest (or meta.json) records
  std::string actual;          // the file's sha256, or "missing" / "unreadable"
};

/// The first file of `entry` (inside `dir`) whose sha256 differs from the recorded one, or
/// nullopt when all agree. Never throws for missing or damaged files.
std::optional<HashMismatch> golden_hash_mismatch(const std::filesystem::path& dir,
                                                 const ManifestEntry& entry);

/// The `pao golden` command of a manifest's run, without --out: "pao golden --suite vllm
/// --partition-size 256 --shard 1/3"; empty for --case runs. Recorded in each entry it writes.
std::string run_command(const Manifest& manifest);

/// The command that writes a manifest's run into `dir` — and, as pao golden resumes, completes
/// it: "pao golden --suite vllm --partition-size 256 --shard 1/3 --out DIR".
std::string golden_command(const Manifest& manifest, const std::filesystem::path& dir);

/// The command that rewrites a manifest's case, for error messages: "pao golden --suite vllm --out
/// DIR --force" (or "--full"; "--case FILE" runs are named generically).
std::string regenerate_command(const Manifest& manifest, const std::filesystem::path& dir);
/// The command that rewrites `entry`: the run that wrote it (entry.command) when recorded — a folder
/// holding several suites' cases names each case's own —, else the manifest's.
std::string regenerate_command(const Manifest& manifest, const ManifestEntry& entry,
                               const std::filesystem::path& dir);

/// Throws pao::Error naming the file, both hashes and how to regenerate when `entry` fails
/// golden_hash_mismatch.
void require_golden_hash(const std::filesystem::path& dir, const Manifest& manifest,
                         const ManifestEntry& entry);

/// require_golden_hash for every case of `folder` its manifest lists (none without a manifest).
void require_golden_hashes(const GoldenFolder& folder);

/// The manifest entry of a golden file or npy folder: the entry of DIR/manifest.json (DIR the
/// golden's folder) whose file is the golden's name, if there is one.
struct ManifestRef {
  Manifest manifest;
  ManifestEntry entry;
};
std::optional<ManifestRef> manifest_entry_of(const std::filesystem::path& golden);

}  // namespace pao::golden

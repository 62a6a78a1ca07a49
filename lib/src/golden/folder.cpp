// Listing a golden folder's cases and what it lacks (pao/golden/folder.hpp).
#include "pao/golden/folder.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <set>

#include "pao/core/error.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/reader.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

/// The cases of `suite_cases` the folder lacks, each with the command that writes it: the run's
/// that expected it (plain runs; else the manifest's own), or shard (position mod N)'s.
void find_missing(GoldenFolder& folder, const Manifest& m, const std::set<std::string>& held,
                  std::int32_t shard_count) {
  for (std::size_t pos = 0; pos < m.suite_cases.size(); ++pos) {
    const std::string& id = m.suite_cases[pos];
    if (held.count(id)) continue;
    if (shard_count == 0 && !m.expected_by(pos).empty()) {  // a folder that several runs filled
      folder.missing.push_back({id, m.expected_by(pos) + " --out " + folder.dir.string()});
      continue;
    }
    Manifest writer = m;
    if (shard_count > 0)
      writer.shard =
          cases::Shard{static_cast<std::int32_t>(pos % static_cast<std::size_t>(shard_count)), shard_count};
    folder.missing.push_back({id, golden_command(writer, folder.dir)});
  }
}

GoldenFolder from_manifest(const fs::path& dir, Manifest manifest, std::int32_t shard_count) {
  GoldenFolder folder;
  folder.dir = dir;
  std::set<std::string> held;
  for (const auto& e : manifest.entries) {
    folder.cases.push_back({e.id, dir / e.file});
    held.insert(e.id);
  }
  if (manifest.suite_cases.empty())
    folder.completeness_unknown = "its manifest does not list its run's cases (written by an older pao)";
  else
    find_missing(folder, manifest, held, shard_count);
  folder.manifest = std::move(manifest);
  return folder;
}

}  // namespace

GoldenFolder list_goldens(const fs::path& dir) {
  if (fs::exists(dir / "manifest.json")) return from_manifest(dir, read_manifest(dir / "manifest.json"), 0);
  if (const auto shards = read_shard_manifests(dir); !shards.empty()) {
    Manifest all;
    try {
      all = union_of_shards(shards);
    } catch (const Error& e) {
      fail(dir.string(), ": its shard manifests disagree: ", e.what());
    }
    const std::int32_t count = shards.begin()->second.shard->count;
    std::vector<std::int32_t> present;
    for (const auto& [i, unused] : shards) present.push_back(i);
    GoldenFolder folder = from_manifest(dir, std::move(all), count);
    folder.shard_count = count;
    folder.missing_shards = cases::missing_shard_ranges(present, count);
    for (const auto& [first, last] : folder.missing_shards)
      folder.missing_shard_count += std::int64_t{last} - first + 1;
    if (!folder.missing_shards.empty()) {
      Manifest writer = *folder.manifest;
      writer.shard = cases::Shard{folder.missing_shards.front().first, count};
      folder.missing_shard_command = golden_command(writer, dir);
    }
    return folder;
  }
  GoldenFolder folder;
  folder.dir = dir;
  folder.completeness_unknown = "it has no manifest";
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path& p = entry.path();
    if (p.filename().string().starts_with(".")) continue;  // temporaries of interrupted writes
    if ((entry.is_regular_file() && p.extension() == ".safetensors") ||
        (entry.is_directory() && fs::exists(p / "meta.json")))
      entries.push_back(p);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    const auto file = TensorFile::open(p);
    auto it = file.metadata().find("case_id");
    if (it == file.metadata().end()) continue;  // not a golden
    folder.cases.push_back({it->second, p});
  }
  require(!folder.cases.empty(), dir.string(),
          ": no manifest.json and no goldens in it (expected <id>.safetensors files or "
          "npy folders)");
  return folder;
}

GoldenFolder golden_of_one(const fs::path& golden) {
  GoldenFolder folder;
  folder.dir = golden.parent_path().empty() ? fs::path(".") : golden.parent_path();
  if (auto ref = manifest_entry_of(golden)) {
    folder.cases.push_back({ref->entry.id, golden});
    folder.manifest = std::move(ref->manifest);
    return folder;
  }
  const auto file = TensorFile::open(golden);
  const auto it = file.metadata().find("case_id");
  require(it != file.metadata().end(), golden.string(), ": not a pao golden (no case_id in its metadata)");
  folder.cases.push_back({it->second, golden});
  return folder;
}

namespace {

/// A golden file, or an npy folder and every file in it.
void add_golden_files(const fs::path& p, std::vector<fs::path>& files) {
  files.push_back(p);
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return;
  for (const auto& entry : fs::directory_iterator(p, ec)) files.push_back(entry.path());
}

}  // namespace

std::vector<fs::path> golden_input_files(const GoldenFolder& folder) {
  std::vector<fs::path> files;
  for (const auto& ref : folder.cases) add_golden_files(ref.path, files);
  return files;
}

std::vector<fs::path> golden_input_files(const fs::path& golden) {
  std::error_code ec;
  if (!fs::exists(golden, ec)) return {};
  if (fs::is_regular_file(golden, ec) || fs::exists(golden / "meta.json", ec)) {
    std::vector<fs::path> files;
    add_golden_files(golden, files);
    return files;
  }
  return golden_input_files(list_goldens(golden));
}

namespace {

/// A shard without its manifest has not run (or was killed), whether or not it holds a case: the
/// folder is incomplete, as --merge-manifests says too.
void require_every_shard(const GoldenFolder& folder) {
  if (folder.missing_shards.empty()) return;
  const std::size_t cases = folder.manifest ? folder.manifest->suite_cases.size() : 0;
  std::string hint;
  if (static_cast<std::size_t>(folder.shard_count) > cases)
    hint = "; its suite has " + std::to_string(cases) + " cases, so shards " + std::to_string(cases) +
           " and up hold none: shard it into at most " + std::to_string(cases) + " shards";
  fail(folder.dir.string(), ": incomplete: ", folder.missing_shard_count, " of its ", folder.shard_count,
       " shards have no manifest (shards ", cases::shard_ranges_text(folder.missing_shards),
       "): every shard writes manifest-shard-i-of-N.json, even one that holds no case, so those have not "
       "run. Complete it with: ",
       folder.missing_shard_command, folder.missing_shard_count > 1 ? " (and likewise the others)" : "",
       hint);
}

}  // namespace

void require_complete(const GoldenFolder& folder, const std::string& glob) {
  std::vector<const MissingCase*> missing;
  for (const auto& m : folder.missing)
    if (glob.empty() || ::fnmatch(glob.c_str(), m.id.c_str(), 0) == 0) missing.push_back(&m);
  if (missing.empty()) {
    if (glob.empty()) require_every_shard(folder);  // --cases: the missing shards' cases are named above
    return;
  }
  const std::size_t expected = folder.manifest ? folder.manifest->suite_cases.size() : 0;
  std::string ids, commands;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i < 4) ids += (i ? ", " : "") + missing[i]->id;
    if (seen.insert(missing[i]->command).second && seen.size() <= 3)
      commands += (seen.size() > 1 ? "; " : "") + missing[i]->command;
  }
  if (missing.size() > 4) ids += ", ...";
  if (seen.size() > 3) commands += "; ... (" + std::to_string(seen.size()) + " shards in all)";
  std::set<std::string> runs;  // the runs that filled the folder, when more than one did
  if (folder.manifest)
    for (const auto& c : folder.manifest->suite_case_commands)
      if (!c.empty()) runs.insert(c);
  const std::string suite = runs.size() > 1 ? "the " + std::to_string(runs.size()) + " runs that filled it"
                            : folder.manifest && !folder.manifest->suite.empty()
                                ? "suite '" + folder.manifest->suite + "'"
                                : "its run";
  fail(folder.dir.string(), ": incomplete: ", missing.size(), " of the ", expected, " cases of ", suite,
       " are missing (", ids,
       "): the run that writes them failed on them (its FAILED lines say why), was killed, ran out of disk, "
       "or has not run yet",
       ". Complete it with: ", commands, " (pao golden resumes: only the missing cases are computed)",
       glob.empty() ? "; or diff a subset on purpose with pao diff --cases GLOB" : "");
}

}  // namespace pao::golden

// Listing a golden folder's cases (pao/golden/folder.hpp).
#include "pao/golden/folder.hpp"

#include <algorithm>

#include "pao/core/error.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/reader.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

GoldenFolder list_goldens(const fs::path& dir) {
  GoldenFolder folder;
  folder.dir = dir;
  if (fs::exists(dir / "manifest.json")) {
    folder.manifest = read_manifest(dir / "manifest.json");
    for (const auto& e : folder.manifest->entries) folder.cases.push_back({e.id, dir / e.file});
    return folder;
  }
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
          "npy folders; shard manifests merge with `pao golden --merge-manifests DIR`)");
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

}  // namespace pao::golden

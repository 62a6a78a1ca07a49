// Goldens against their manifests' hashes (pao/golden/integrity.hpp).
#include "pao/golden/integrity.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "pao/core/error.hpp"
#include "pao/io/json_read.hpp"
#include "pao/io/sha256.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

/// The mismatch of one file against a recorded hash, if any.
std::optional<HashMismatch> file_mismatch(const fs::path& path, const std::string& expected) {
  if (!fs::is_regular_file(path)) return HashMismatch{path, expected, "missing"};
  std::string actual;
  try {
    actual = sha256_file_hex(path);
  } catch (const Error&) {
    return HashMismatch{path, expected, "unreadable"};
  }
  if (actual != expected) return HashMismatch{path, expected, actual};
  return std::nullopt;
}

}  // namespace

std::optional<HashMismatch> golden_hash_mismatch(const fs::path& dir, const ManifestEntry& entry) {
  const fs::path path = dir / entry.file;
  if (entry.format == GoldenFormat::safetensors) return file_mismatch(path, entry.sha256);
  if (auto m = file_mismatch(path / "meta.json", entry.sha256)) return m;
  try {
    const std::string origin = (path / "meta.json").string();
    const nlohmann::json meta = parse_json(read_text_file(path / "meta.json", origin), origin);
    for (const auto& t : meta.at("tensors"))
      if (auto m = file_mismatch(file_inside_folder(path, t.at("file").get<std::string>(), origin),
                                 t.at("sha256").get<std::string>()))
        return m;
  } catch (const std::exception&) {  // nlohmann's or pao::Error (invalid, too deep, too large)
    return HashMismatch{path / "meta.json", entry.sha256, "unreadable"};
  }
  return std::nullopt;
}

std::string run_command(const Manifest& manifest) {
  if (manifest.suite.empty()) return "";
  std::string cmd = "pao golden --suite " + manifest.suite + (manifest.full ? " --full" : "");
  if (!manifest.golden_flags.empty()) cmd += " " + manifest.golden_flags;
  if (manifest.shard)
    cmd += " --shard " + std::to_string(manifest.shard->index) + "/" + std::to_string(manifest.shard->count);
  return cmd;
}

std::string golden_command(const Manifest& manifest, const fs::path& dir) {
  if (manifest.suite.empty()) return "rerun the `pao golden --case ...` command that wrote " + dir.string();
  return run_command(manifest) + " --out " + dir.string();
}

std::string regenerate_command(const Manifest& manifest, const fs::path& dir) {
  if (manifest.suite.empty()) return golden_command(manifest, dir) + " with --force";
  return golden_command(manifest, dir) + " --force";
}

std::string regenerate_command(const Manifest& manifest, const ManifestEntry& entry, const fs::path& dir) {
  if (entry.command.empty()) return regenerate_command(manifest, dir);
  return entry.command + " --out " + dir.string() + " --force";
}

void require_golden_hash(const fs::path& dir, const Manifest& manifest, const ManifestEntry& entry) {
  const auto m = golden_hash_mismatch(dir, entry);
  if (!m) return;
  fail(m->file.string(), ": golden '", entry.id, "' does not match its manifest (",
       (dir / manifest_file_name(manifest.shard)).string(), "): sha256 ", m->actual,
       ", the manifest records ", m->expected,
       ". It was modified or damaged after pao wrote it, and a verdict against it cannot be trusted; "
       "regenerate it: ",
       regenerate_command(manifest, entry, dir));
}

void require_golden_hashes(const GoldenFolder& folder) {
  if (!folder.manifest) return;
  for (const auto& ref : folder.cases)
    if (const ManifestEntry* e = folder.manifest->find(ref.id))
      require_golden_hash(folder.dir, *folder.manifest, *e);
}

std::optional<ManifestRef> manifest_entry_of(const fs::path& golden) {
  const fs::path dir = golden.parent_path().empty() ? fs::path(".") : golden.parent_path();
  const fs::path manifest_path = dir / "manifest.json";
  if (!fs::is_regular_file(manifest_path)) return std::nullopt;
  Manifest manifest = read_manifest(manifest_path);
  const std::string name = golden.filename().string();
  for (const auto& e : manifest.entries)
    if (e.file == name) return ManifestRef{manifest, e};
  return std::nullopt;
}

}  // namespace pao::golden

// Golden manifests: reading, writing and merging shards (pao/golden/manifest.hpp).
#include "pao/golden/manifest.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/json_read.hpp"
#include "pao/io/output_path.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

using nlohmann::json;

json entry_to_json(const ManifestEntry& e) {
  json j{{"id", e.id},
         {"kernel", e.kernel},
         {"file", e.file},
         {"format", to_string(e.format)},
         {"sha256", e.sha256},
         {"bytes", e.bytes},
         {"pao_version", e.pao_version},
         {"parameters", json::parse(e.parameters)},
         {"outputs", e.outputs}};
  if (!e.command.empty()) j["command"] = e.command;
  return j;
}

ManifestEntry entry_from_json(const json& j) {
  ManifestEntry e;
  e.id = j.at("id").get<std::string>();
  e.kernel = j.at("kernel").get<std::string>();
  e.file = j.at("file").get<std::string>();
  e.format = parse_golden_format(j.at("format").get<std::string>());
  e.sha256 = j.at("sha256").get<std::string>();
  e.bytes = j.at("bytes").get<std::uint64_t>();
  e.pao_version = j.at("pao_version").get<std::string>();
  e.parameters = j.at("parameters").dump();
  e.outputs = j.value("outputs", "all");  // manifests written before --outputs
  e.command = j.value("command", "");     // manifests written before pao recorded it
  return e;
}

/// "manifest-shard-<i>-of-<N>.json" -> (i, N). (No std::regex: GCC 12 with sanitizers warns inside it.)
std::optional<std::pair<std::int32_t, std::int32_t>> parse_shard_manifest_name(std::string_view name) {
  constexpr std::string_view kPrefix = "manifest-shard-", kMiddle = "-of-", kSuffix = ".json";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  name = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  const auto middle = name.find(kMiddle);
  if (middle == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view digits, std::int32_t& out) {
    const auto res = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return !digits.empty() && res.ec == std::errc() && res.ptr == digits.data() + digits.size();
  };
  std::int32_t i = 0, n = 0;
  if (!number(name.substr(0, middle), i) || !number(name.substr(middle + kMiddle.size()), n))
    return std::nullopt;
  return std::make_pair(i, n);
}

bool same_contents(const ManifestEntry& a, const ManifestEntry& b) {
  return a.file == b.file && a.format == b.format && a.sha256 == b.sha256 && a.parameters == b.parameters &&
         a.outputs == b.outputs;
}

}  // namespace

fs::path file_inside_folder(const fs::path& dir, const std::string& file, const std::string& origin) {
  const fs::path name(file);
  std::string why;
  if (file.empty()) {
    why = "is empty";
  } else if (name.is_absolute() || name.has_root_path()) {
    why = "is an absolute path";
  } else if (std::any_of(name.begin(), name.end(), [](const fs::path& part) { return part == ".."; })) {
    why = "climbs out with \"..\"";
  } else if (const fs::path target = resolved_path(dir / name);
             !strictly_inside(target, resolved_path(dir))) {
    why = "is a symbolic link to ";
    why += excerpt(target.string());
  }
  if (why.empty()) return dir / name;
  fail(origin, ": the file '", excerpt(file), "' ", why,
       ", which leads outside the folder: a golden folder's files must lie inside it (copy the "
       "golden in, or regenerate the folder with pao golden)");
}

const ManifestEntry* Manifest::find(const std::string& id) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), id,
                             [](const ManifestEntry& e, const std::string& key) { return e.id < key; });
  return it != entries.end() && it->id == id ? &*it : nullptr;
}

void Manifest::expect_cases(const std::vector<std::string>& ids, const std::string& command) {
  suite_case_commands.resize(suite_cases.size());
  for (const auto& id : ids)
    if (std::find(suite_cases.begin(), suite_cases.end(), id) == suite_cases.end()) {
      suite_cases.push_back(id);
      suite_case_commands.push_back(command);
    }
}

const std::string& Manifest::expected_by(std::size_t pos) const {
  static const std::string none;
  return pos < suite_case_commands.size() ? suite_case_commands[pos] : none;
}

void Manifest::upsert(ManifestEntry e) {
  auto it = std::lower_bound(entries.begin(), entries.end(), e.id,
                             [](const ManifestEntry& x, const std::string& key) { return x.id < key; });
  if (it != entries.end() && it->id == e.id) {
    *it = std::move(e);
  } else {
    entries.insert(it, std::move(e));
  }
}

std::string manifest_file_name(const std::optional<cases::Shard>& shard) {
  if (!shard) return "manifest.json";
  return "manifest-shard-" + std::to_string(shard->index) + "-of-" + std::to_string(shard->count) + ".json";
}

Manifest read_manifest(const fs::path& path) {
  const std::string origin = "manifest " + path.string();
  const json j = parse_json(read_text_file(path, origin), origin);
  try {
    if (j.value("format", "") != "pao-golden-manifest")
      fail("manifest ", path.string(),
           ": not a pao golden manifest (\"format\" is not \"pao-golden-manifest\")");
    Manifest m;
    m.suite = j.value("suite", json(nullptr)).is_string() ? j["suite"].get<std::string>() : "";
    m.full = j.value("full", false);
    m.golden_flags = j.value("golden_flags", "");
    if (j.contains("shard"))
      m.shard = cases::Shard{j["shard"].at("index").get<std::int32_t>(),
                             j["shard"].at("count").get<std::int32_t>()};
    for (const auto& e : j.at("cases")) {
      ManifestEntry entry = entry_from_json(e);
      file_inside_folder(path.parent_path().empty() ? fs::path(".") : path.parent_path(), entry.file,
                         origin + ", case '" + excerpt(entry.id) + "'");
      m.upsert(std::move(entry));
    }
    if (j.contains("suite_cases")) m.suite_cases = j["suite_cases"].get<std::vector<std::string>>();
    if (j.contains("suite_case_commands"))
      m.suite_case_commands = j["suite_case_commands"].get<std::vector<std::string>>();
    // Only hints for a missing case's command: a list that does not fit suite_cases (an edited
    // manifest) is dropped, and the manifest's own run is named instead.
    if (m.suite_case_commands.size() != m.suite_cases.size()) m.suite_case_commands.clear();
    return m;
  } catch (const json::exception& e) {
    fail(origin, ": malformed: ", excerpt(e.what()));
  }
}

void write_manifest(const fs::path& path, const Manifest& m) {
  json j;
  j["format"] = "pao-golden-manifest";
  j["format_version"] = 1;
  j["pao_version"] = PAO_VERSION;
  j["suite"] = m.suite.empty() ? json(nullptr) : json(m.suite);
  j["full"] = m.full;
  if (!m.golden_flags.empty()) j["golden_flags"] = m.golden_flags;
  if (m.shard) j["shard"] = {{"index", m.shard->index}, {"count", m.shard->count}};
  if (!m.suite_cases.empty()) j["suite_cases"] = m.suite_cases;
  if (std::any_of(m.suite_case_commands.begin(), m.suite_case_commands.end(),
                  [](const std::string& c) { return !c.empty(); }))
    j["suite_case_commands"] = m.suite_case_commands;
  j["cases"] = json::array();
  for (const auto& e : m.entries) j["cases"].push_back(entry_to_json(e));
  const std::string text = j.dump(1) + "\n";
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::map<std::int32_t, Manifest> read_shard_manifests(const fs::path& dir) {
  std::map<std::int32_t, Manifest> shards;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto parsed = parse_shard_manifest_name(entry.path().filename().string());
    if (!parsed) continue;
    const auto [i, n] = *parsed;
    require(shards.empty() || shards.begin()->second.shard->count == n, dir.string(),
            " holds shard manifests of different shard counts (", shards.begin()->second.shard->count,
            " and ", n, ")");
    Manifest m = read_manifest(entry.path());
    m.shard = cases::Shard{i, n};  // the name says which shard it is
    shards.emplace(i, std::move(m));
  }
  require(ec.value() == 0, "cannot read the folder ", dir.string(), ": ", ec.message());
  return shards;
}

Manifest union_of_shards(const std::map<std::int32_t, Manifest>& shards) {
  require(!shards.empty(), "union_of_shards: no shard manifest");
  const auto& [first_index, first] = *shards.begin();
  Manifest all;
  all.suite = first.suite;
  all.full = first.full;
  all.golden_flags = first.golden_flags;
  std::map<std::string, std::int32_t> owner;
  for (const auto& [i, part] : shards) {
    const std::string name = manifest_file_name(part.shard);
    require(part.suite == all.suite && part.full == all.full && part.golden_flags == all.golden_flags, name,
            " is from suite '", part.suite, "'", part.full ? " (full)" : "", " with flags '",
            part.golden_flags, "' but shard ", first_index, " is from '", all.suite, "'",
            all.full ? " (full)" : "", " with flags '", all.golden_flags, "'");
    all.expect_cases(part.suite_cases);
    for (const auto& e : part.entries) {
      auto [it, inserted] = owner.emplace(e.id, i);
      if (!inserted)
        require(same_contents(*all.find(e.id), e), "case ", e.id, " is in shards ", it->second, " and ", i,
                " with different contents");
      all.upsert(e);
    }
  }
  return all;
}

Manifest merge_shard_manifests(const fs::path& dir) {
  const std::map<std::int32_t, Manifest> shards = read_shard_manifests(dir);
  require(!shards.empty(), "merge: no manifest-shard-*-of-*.json in ", dir.string());
  const std::int32_t count = shards.begin()->second.shard->count;
  // Named up to an excerpt's length, counted in full: a million missing shards make one short line.
  std::string missing;
  std::int64_t missing_count = 0;
  for (std::int32_t i = 0; i < count; ++i)
    if (!shards.count(i)) {
      ++missing_count;
      if (missing.size() < kExcerptChars)
        missing += (missing.empty() ? "" : ", ") + std::to_string(i);
      else if (!missing.ends_with("..."))
        missing += ", ...";
    }
  require(missing_count == 0, "merge: shards ", missing, " of ", count, " have no manifest in ", dir.string(),
          " (", missing_count, " missing: still running, or failed?)");
  Manifest merged;
  if (fs::exists(dir / "manifest.json")) merged = read_manifest(dir / "manifest.json");
  Manifest all;
  try {
    all = union_of_shards(shards);
  } catch (const Error& e) {
    fail("merge: ", dir.string(), ": ", e.what());
  }
  merged.shard.reset();
  merged.suite = all.suite;
  merged.full = all.full;
  merged.golden_flags = all.golden_flags;
  merged.expect_cases(all.suite_cases);
  for (auto& e : all.entries) merged.upsert(std::move(e));
  write_manifest(dir / "manifest.json", merged);
  return merged;
}

}  // namespace pao::golden

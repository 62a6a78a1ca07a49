// Suites: named grids of cases in data/cases/<name>.json. A suite holds one or more grids; a
// grid has fixed case fields, axes (a list of values per field, or of objects that set several
// fields at once, e.g. {"num_heads": 64, "num_kv_heads": 8}) and exclusions. Expansion gives the
// pairwise cover of each grid by default, the full product on request, in a fixed order; ids come
// from the parameters (pao/cases/case.hpp), so they are stable. docs/golden.md shows the format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/cases/shard.hpp"

namespace pao::cases {

struct SuiteInfo {
  std::string name;
  std::string description;
  std::filesystem::path path;
};

/// Expands a suite file. full: every allowed combination; else the pairwise cover. Throws
/// pao::Error naming the file, the grid and the field for malformed suites, invalid cases and
/// duplicate ids.
std::vector<Case> expand_suite(const std::filesystem::path& suite_file, bool full);
std::vector<Case> expand_suite_text(std::string_view json_text, std::string_view source, bool full);

/// Where suites are found by name: $PAO_CASES_DIR when set, else data_dir() / "cases".
std::filesystem::path cases_dir();

/// `name_or_path` is a file path (anything ending in .json or containing '/') or a suite name
/// looked up as <cases_dir>/<name>.json. Throws pao::Error listing the known suites if not found.
std::filesystem::path find_suite(std::string_view name_or_path, const std::filesystem::path& cases_dir);
/// The suites in cases_dir, sorted by name.
std::vector<SuiteInfo> list_suites(const std::filesystem::path& cases_dir);

}  // namespace pao::cases

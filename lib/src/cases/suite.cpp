// Suite files: grids of case fields expanded to pairwise or full case lists (pao/cases/suite.hpp).
#include "pao/cases/suite.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pao/cases/pairwise.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/io/json_read.hpp"

namespace pao::cases {

namespace {

// Suites keep the author's key order: axes vary in the order they are written (first slowest).
using ojson = nlohmann::ordered_json;

struct Axis {
  std::string name;
  std::vector<ojson> values;
};

struct Grid {
  std::string label;
  ojson fixed = ojson::object();
  std::vector<Axis> axes;
  std::vector<ojson> excludes;  // objects: field -> list of values
};

std::string read_text(const std::filesystem::path& path, std::string_view what) {
  return read_text_file(path, std::string(what) + " " + path.string());
}

void check_keys(const ojson& j, std::initializer_list<std::string_view> known, const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known) {
        if (!list.empty()) list += ", ";
        list += k;
      }
      fail(where, ": unknown key '", excerpt(key), "' (expected ", list, ")");
    }
  }
}

Grid parse_grid(const ojson& g, const std::string& where) {
  if (!g.is_object()) fail(where, ": a grid must be a JSON object");
  check_keys(g, {"name", "fixed", "axes", "exclude"}, where);
  Grid grid;
  if (g.contains("name")) {
    if (!g["name"].is_string()) fail(where, ": 'name' must be a string");
    grid.label = g["name"].get<std::string>();
  }
  if (g.contains("fixed")) {
    if (!g["fixed"].is_object()) fail(where, ": 'fixed' must be an object of case fields");
    grid.fixed = g["fixed"];
  }
  if (g.contains("axes")) {
    if (!g["axes"].is_object()) fail(where, ": 'axes' must be an object: field -> list of values");
    for (const auto& [name, values] : g["axes"].items()) {
      if (!values.is_array() || values.empty())
        fail(where, ": axis '", excerpt(name), "' must be a non-empty list");
      Axis axis{name, {}};
      for (const auto& v : values) {
        if (!v.is_object() && grid.fixed.contains(name))
          fail(where, ": axis '", excerpt(name), "' also appears in 'fixed'");
        if (v.is_object())
          for (const auto& [key, unused] : v.items())
            if (grid.fixed.contains(key))
              fail(where, ": axis '", excerpt(name), "' sets '", excerpt(key), "', which 'fixed' also sets");
        axis.values.push_back(v);
      }
      grid.axes.push_back(std::move(axis));
    }
  }
  if (g.contains("exclude")) {
    if (!g["exclude"].is_array()) fail(where, ": 'exclude' must be a list of objects");
    for (const auto& e : g["exclude"]) {
      if (!e.is_object() || e.empty()) fail(where, ": each 'exclude' entry must be a non-empty object");
      grid.excludes.push_back(e);
    }
  }
  return grid;
}

ojson merged_case(const Grid& grid, const GridRow& row) {
  ojson c = grid.fixed;
  for (std::size_t a = 0; a < grid.axes.size(); ++a) {
    const ojson& v = grid.axes[a].values[row[a]];
    if (v.is_object()) {
      for (const auto& [key, value] : v.items()) c[key] = value;
    } else {
      c[grid.axes[a].name] = v;
    }
  }
  return c;
}

bool excluded(const Grid& grid, const ojson& c) {
  for (const auto& e : grid.excludes) {
    bool all = true;
    for (const auto& [field, values] : e.items()) {
      const ojson actual = c.contains(field) ? c[field] : ojson(nullptr);
      const bool any = values.is_array() ? std::find(values.begin(), values.end(), actual) != values.end()
                                         : values == actual;
      if (!any) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

std::vector<Case> expand_suite_text(std::string_view json_text, std::string_view source, bool full) {
  const std::string where = "suite " + std::string(source);
  const ojson j = parse_ordered_json(json_text, where);
  if (!j.is_object()) fail(where, ": expected a JSON object");
  check_keys(j, {"suite", "description", "grids", "notes"}, where);
  if (!j.contains("grids") || !j["grids"].is_array() || j["grids"].empty())
    fail(where, ": 'grids' must be a non-empty list");

  std::vector<Case> cases;
  std::map<std::string, std::string> origin;  // id -> where it came from
  for (std::size_t g = 0; g < j["grids"].size(); ++g) {
    const std::string grid_where = where + " grid " + std::to_string(g);
    const Grid grid = parse_grid(j["grids"][g], grid_where);
    std::vector<std::size_t> sizes;
    for (const auto& a : grid.axes) sizes.push_back(a.values.size());
    const auto rows =
        grid_product(sizes, [&](const GridRow& r) { return !excluded(grid, merged_case(grid, r)); });
    const auto chosen = full ? rows : pairwise_cover(sizes, rows);
    for (const auto& row : chosen) {
      const ojson c = merged_case(grid, row);
      std::string case_where = grid_where;
      if (!grid.label.empty()) case_where += " (" + excerpt(grid.label) + ")";
      case_where += " case ";
      case_where += json_excerpt(c);
      Case parsed = parse_case(c.dump(), case_where);
      auto [it, inserted] = origin.emplace(parsed.id, case_where);
      if (!inserted)
        fail(where, ": two cases share the id '", excerpt(parsed.id), "': ", it->second, " and ", case_where);
      cases.push_back(std::move(parsed));
    }
  }
  return cases;
}

std::vector<Case> expand_suite(const std::filesystem::path& suite_file, bool full) {
  return expand_suite_text(read_text(suite_file, "suite"), suite_file.string(), full);
}

std::filesystem::path cases_dir() {
  if (const char* env = std::getenv("PAO_CASES_DIR"); env != nullptr && *env != '\0') return env;
  return data_dir() / "cases";
}

std::vector<SuiteInfo> list_suites(const std::filesystem::path& cases_dir) {
  std::vector<SuiteInfo> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cases_dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    SuiteInfo info{entry.path().stem().string(), "", entry.path()};
    try {
      const ojson j = parse_ordered_json(read_text(entry.path(), "suite"), "suite " + entry.path().string());
      if (j.contains("description") && j["description"].is_string()) info.description = j["description"];
    } catch (const std::exception&) {
      info.description = "(unreadable)";
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const SuiteInfo& a, const SuiteInfo& b) { return a.name < b.name; });
  return out;
}

std::filesystem::path find_suite(std::string_view name_or_path, const std::filesystem::path& cases_dir) {
  const std::string s(name_or_path);
  if (s.find('/') != std::string::npos || (s.size() > 5 && s.ends_with(".json"))) {
    if (!std::filesystem::is_regular_file(s)) fail("suite ", s, ": no such file");
    return s;
  }
  const auto path = cases_dir / (s + ".json");
  if (std::filesystem::is_regular_file(path)) return path;
  std::string known;
  for (const auto& info : list_suites(cases_dir)) {
    if (!known.empty()) known += ", ";
    known += info.name;
  }
  fail("suite '", s, "' not found in ", cases_dir.string(),
       " (known suites: ", known.empty() ? "none" : known, ")");
}

}  // namespace pao::cases

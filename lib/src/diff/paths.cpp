// Matching goldens with ACTUALs: files, folders with a manifest, folders without (pao/diff/diff.hpp).
#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/folder.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/reader.hpp"

namespace pao::diff {

namespace fs = std::filesystem;

namespace {

using golden::GoldenRef;

/// ACTUAL for a case inside a folder: <id>.safetensors, <id>/, or the golden's file name. One that
/// cannot be examined (a symlink loop, no permission) is returned too: reading it fails that case.
std::optional<fs::path> find_actual(const fs::path& dir, const GoldenRef& ref) {
  for (const fs::path& candidate :
       {dir / (ref.id + ".safetensors"), dir / ref.id, dir / ref.path.filename()}) {
    std::error_code ec;
    const fs::file_status st = fs::status(candidate, ec);
    if (fs::is_regular_file(st) || fs::is_directory(st)) return candidate;
    if (ec && fs::exists(fs::symlink_status(candidate, ec))) return candidate;
  }
  return std::nullopt;
}

/// `p` made canonical where it can be (the set of ACTUAL paths used), else `p` as it is.
fs::path canonical_or_same(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c;
}

/// The vendor's own message for a case it could not run: ACTUAL/<id>.error, if there is one.
std::optional<std::string> vendor_error(const fs::path& dir, const std::string& id) {
  const fs::path file = dir / (id + ".error");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.size() > 2000) text = text.substr(0, 2000) + " [...]";
  return text;
}

/// A case whose ACTUAL could not be read: it fails with `error`. A golden that cannot be read is
/// bad input for the whole run instead (rethrown here).
CaseReport failed_case(const GoldenRef& ref, const fs::path& actual, const std::string& error) {
  golden::golden_case_of(golden::TensorFile::open(ref.path));  // rethrows for a bad golden
  CaseReport rep;
  rep.case_id = ref.id;
  rep.golden = ref.path;
  rep.actual = actual;
  rep.error = error;
  return rep;
}

CaseReport diff_one(const GoldenRef& ref, const fs::path& actual_dir, const DiffOptions& options,
                    std::set<fs::path>& used) {
  const auto actual = find_actual(actual_dir, ref);
  if (!actual) {
    CaseReport rep;
    rep.case_id = ref.id;
    rep.golden = ref.path;
    rep.actual = actual_dir;
    if (const auto message = vendor_error(actual_dir, ref.id)) {
      used.insert(canonical_or_same(actual_dir / (ref.id + ".error")));
      rep.error = "the vendor could not run this case (" + ref.id + ".error): " + *message;
    } else if (options.allow_missing) {
      rep.not_run = true;
    } else {
      rep.error = "no outputs for this case in " + actual_dir.string() + " (looked for " + ref.id +
                  ".safetensors and " + ref.id + "/; --allow-missing reports such cases as not run)";
    }
    return rep;
  }
  used.insert(canonical_or_same(*actual));
  try {
    CaseReport rep = diff_case(ref.path, *actual, options);
    if (const auto message = vendor_error(actual_dir, ref.id)) {
      used.insert(canonical_or_same(actual_dir / (ref.id + ".error")));
      std::string first_line = message->substr(0, message->find('\n'));
      if (first_line.size() > 200) first_line = first_line.substr(0, 200) + " [...]";
      rep.notes.push_back("ACTUAL also holds " + ref.id + ".error (\"" + first_line +
                          "\"), ignored: the case's outputs were compared. Remove it if it is stale, or "
                          "the outputs if the kernel failed after writing them");
    }
    return rep;
  } catch (const golden::UnsoundGolden&) {
    throw;
  } catch (const Error& e) {
    return failed_case(ref, *actual, e.what());
  } catch (const fs::filesystem_error& e) {
    return failed_case(ref, *actual, e.path1().string() + ": cannot read: " + e.code().message());
  }
}

/// A file, or a folder of one case's tensors (a meta.json, or .npy files at its top).
bool holds_one_case(const fs::path& p) {
  if (!fs::is_directory(p)) return true;
  if (fs::exists(p / "meta.json")) return true;
  for (const auto& entry : fs::directory_iterator(p))
    if (entry.is_regular_file() && entry.path().extension() == ".npy") return true;
  return false;
}

}  // namespace

std::string dtype_path_cause(const std::vector<CaseReport>& cases) {
  struct Attribute {
    std::string (*of)(const std::string& path);
    const char* path_text;  // what the failing cases share, worded for the line
  };
  const Attribute attributes[] = {
      {[](const std::string& p) {
         return p.find(" with ") == std::string::npos ? "" : p.substr(p.find(" with ") + 1);
       },
       "the dequantisation of the cache"},
      {[](const std::string& p) {
         return std::string(p.find(" with ") == std::string::npos ? "" : "with a quantised cache");
       },
       "the dequantisation of the caches"},
      {[](const std::string& p) { return p.substr(0, p.find(' ')); },
       "the conversions and loads of that dtype"},
  };
  std::vector<const CaseReport*> judged;  // compared, not an error
  for (const auto& c : cases)
    if (!c.not_run && c.error.empty() && c.compared_count() > 0) judged.push_back(&c);
  if (judged.size() < 2) return "";
  for (const auto& a : attributes) {
    std::map<std::string, std::pair<int, int>> tally;  // value -> failing, cases
    for (const auto* c : judged) {
      auto& [failing, all] = tally[a.of(c->dtype_path)];
      failing += !c->passed();
      ++all;
    }
    std::int64_t failing_total = 0;
    for (const auto& [value, t] : tally) failing_total += t.first;
    for (const auto& [value, t] : tally) {
      if (value.empty() || t.first != t.second || t.first != failing_total ||
          t.second == static_cast<int>(judged.size()))
        continue;
      std::ostringstream os;
      const std::size_t others = judged.size() - static_cast<std::size_t>(t.second);
      os << "only the " << (value.starts_with("with") ? "cases " + value : value + " cases") << " fail ("
         << t.first << " of " << t.second << "; the " << others
         << (others == 1 ? " other passes" : " others pass") << "): " << a.path_text;
      return os.str();
    }
  }
  return "";
}

DiffReport diff_paths(const fs::path& golden, const fs::path& actual, const DiffOptions& options) {
  require(fs::exists(golden), golden.string(), ": no such file or folder");
  require(fs::exists(actual), actual.string(), ": no such file or folder");
  DiffReport report;
  const bool golden_is_case = fs::is_regular_file(golden) || fs::exists(golden / "meta.json");
  if (golden_is_case) {
    const golden::GoldenFolder one = golden::golden_of_one(golden);
    golden::require_golden_hashes(one);
    if (holds_one_case(actual)) {
      report.cases.push_back(diff_case(golden, actual, options));
      return report;
    }
    // ACTUAL is a folder of cases: look this one up by its id.
    std::set<fs::path> used;
    report.cases.push_back(diff_one(one.cases.front(), actual, options, used));
    return report;
  }
  require(fs::is_directory(actual), actual.string(), ": GOLDEN ", golden.string(),
          " is a folder of cases, so ACTUAL must be a folder too");
  std::set<fs::path> used;
  std::set<std::string> ids;
  golden::GoldenFolder folder = golden::list_goldens(golden);
  if (!options.cases_glob.empty()) {
    std::vector<GoldenRef> selected;
    for (const auto& ref : folder.cases)
      if (::fnmatch(options.cases_glob.c_str(), ref.id.c_str(), 0) == 0) selected.push_back(ref);
    if (selected.empty()) {
      std::string some;
      for (std::size_t i = 0; i < folder.cases.size() && i < 3; ++i)
        some += (i ? ", " : "") + folder.cases[i].id;
      fail("--cases ", options.cases_glob, ": matches none of the ", folder.cases.size(), " cases of ",
           golden.string(), " (e.g. ", some, ")");
    }
    folder.cases = std::move(selected);
  }
  // Every golden is checked against its manifest before any is compared: a damaged or incomplete
  // suite is refused whole (exit 2), not half-diffed.
  golden::require_complete(folder, options.cases_glob);
  if (!folder.completeness_unknown.empty())
    report.notes.push_back("GOLDEN " + golden.string() +
                           ": whether every case of its suite is there is not " +
                           "known: " + folder.completeness_unknown);
  golden::require_golden_hashes(folder);
  for (const auto& ref : folder.cases) {
    ids.insert(ref.id);
    report.cases.push_back(diff_one(ref, actual, options, used));
  }
  // With --cases, the rest of ACTUAL belongs to cases not asked about: no notes for it.
  for (const auto& entry : fs::directory_iterator(actual)) {
    if (!options.cases_glob.empty()) break;
    const fs::path& p = entry.path();
    std::error_code ec;  // an entry that cannot be examined (a symlink loop) is listed by its name
    const bool candidate =
        (p.extension() == ".safetensors" && !entry.is_directory(ec)) || entry.is_directory(ec);
    if (candidate && !p.filename().string().starts_with(".") && !used.count(canonical_or_same(p)))
      report.notes.push_back("ACTUAL " + p.string() + " matches no golden case");
  }
  report.dtype_pattern = dtype_path_cause(report.cases);
  return report;
}

}  // namespace pao::diff

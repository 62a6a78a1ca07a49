// `pao audit --suite S`: runs every mutation of the library (bugs and legitimate implementations,
// all computed for real) over a suite and prints the detection matrix of `pao diff`: mutation x
// dtype class -> caught (bugs) or passed (legitimate) / cases it applies to. Exit 0: every bug caught
// and every legitimate variation passed; 1: a miss, or nothing audited; 2: bad input.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "pao/audit/audit.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"

namespace pao::cli {

namespace fs = std::filesystem;

namespace {

void write_text(const std::string& path, const std::string& text) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int run_audit(int argc, char** argv) {
  const std::string mutation_list = audit::mutation_table();
  CLI::App app{
      "Measures what pao diff catches: every mutation (a bug kernels really have, or a legitimate\n"
      "implementation) is computed for real on every case of a suite and diffed under the default rule\n"
      "(or --policy). Prints the matrix mutation x dtype class: bugs caught / cases the bug applies to,\n"
      "legitimate variations passed / cases. A mutation that cannot change a case is not counted.\n"
      "The cause column: for each caught bug, how often the cause pao diff names for the case (the\n"
      "most telling pattern: line) is the bug's, over the cases whose structure shows one.\n"
      "Exit status: 0 every bug caught and every legitimate variation passed, 1 a miss or nothing audited\n"
      "(no mutation applied to any case, or one named by --mutations applied to none), 2 bad input.\n\n"
      "mutations:\n" +
          mutation_list +
          "\nexamples:\n"
          "  pao audit --suite smoke\n"
          "  pao audit --suite vllm --json audit.json --svg audit.svg\n"
          "  pao audit --suite fp8 --mutations k_scale_ignored,v_scale_ignored,fp8_other_format",
      "pao audit"};
  std::string suite, json_path, svg_path, mutations_text, scratch;
  std::vector<std::string> policies;
  bool full = false, verbose = false;
  app.add_option("--suite", suite, "suite name in data/cases (or a suite .json path)")->required();
  app.add_flag("--full", full, "the suite's full product instead of its pairwise cover");
  app.add_option("--mutations", mutations_text, "comma-separated mutation names (default: all)");
  app.add_option("--policy", policies, "as pao diff --policy: audit another rule than the default");
  app.add_option("--json", json_path, "write every case's outcomes and the matrix as JSON to FILE");
  app.add_option("--svg", svg_path, "write the matrix as a heat map (SVG) to FILE");
  app.add_option("--scratch", scratch,
                 "folder in which audit makes its own temporary folder for the goldens, removed at the end; "
                 "nothing else in it is touched (default: $TMPDIR)");
  bool out_only = false;
  app.add_flag("--out-only", out_only, "vendors hand over out only, no V2 partials (the harder test)");
  app.add_flag("--verbose,-v", verbose, "one line per case and mutation");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;

  audit::AuditOptions options;
  options.mutations = split_list(mutations_text);
  options.out_only = out_only;
  for (const auto& name : options.mutations) audit::find_mutation(name);  // bad names fail before any work
  for (const auto& p : policies) options.diff.overrides.push_back(diff::parse_policy_override(p));
  const fs::path suite_file = cases::find_suite(suite, cases::cases_dir());
  check_file_outputs({{"--json", json_path}, {"--svg", svg_path}},
                     {{"--suite", suite_file}, {"--scratch", scratch}});
  refuse_output_over_input("--scratch", scratch, {{"--suite", suite_file}});
  const std::vector<cases::Case> cases = cases::expand_suite(suite_file, full);
  require(!cases.empty(), "--suite ", suite,
          ": selects no case (its exclude rules remove every case of its grids): nothing to audit");
  // audit_cases makes its own folder inside the scratch folder and removes only that (what it
  // wrote): a --scratch that holds goldens keeps them. A --scratch it had to create goes too, if
  // empty.
  options.scratch = scratch.empty() ? fs::temp_directory_path() : fs::path(scratch);
  std::error_code ec;
  require(!fs::exists(options.scratch, ec) || fs::is_directory(options.scratch, ec), "--scratch ", scratch,
          ": not a folder");
  // The folders a --scratch that does not exist yet makes (a/b: a and b), removed again, deepest
  // first, when empty at the end.
  std::vector<fs::path> created;
  if (!scratch.empty())
    for (fs::path p = fs::absolute(options.scratch, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec);
         p = p.parent_path())
      created.push_back(p);
  const auto remove_created = [&] {
    for (const auto& p : created) fs::remove(p, ec);  // only when empty; deepest first
  };
  options.on_case = [&](std::size_t done, std::size_t total, const audit::CaseAudit& a) {
    std::fprintf(stderr, "[%zu/%zu] %s\n", done, total, a.case_id.c_str());
    if (!verbose) return;
    for (const auto& o : a.outcomes)
      std::printf(
          "  %-30s %s\n", o.mutation.c_str(),
          !o.not_applicable.empty() ? ("not applicable: " + o.not_applicable).c_str()
          : o.diff_passed
              ? "diff passed"
              : ("diff failed: " + o.failures + (o.cause.empty() ? "" : "; cause " + o.cause)).c_str());
  };
  std::vector<audit::CaseAudit> audits;
  try {
    audits = audit::audit_cases(cases, options);
  } catch (...) {
    remove_created();
    throw;
  }
  remove_created();

  const audit::AuditMatrix matrix = audit::make_matrix(audits);
  std::printf("pao audit: suite %s, %zu cases\n\n%s", suite.c_str(), cases.size(),
              audit::render_matrix_text(matrix).c_str());
  if (!json_path.empty()) write_text(json_path, audit::render_audit_json(audits, matrix));
  if (!svg_path.empty())
    write_text(svg_path, audit::render_matrix_svg(matrix, "pao audit: suite " + suite + ", " +
                                                              std::to_string(cases.size()) + " cases"));
  if (!matrix.unnamed.empty()) {
    std::printf("\ncaught, another cause named (%zu):\n", matrix.unnamed.size());
    for (const auto& u : matrix.unnamed) std::printf("  %s\n", u.c_str());
  }
  // Nothing audited is never a pass (as pao diff on nothing compared): a CI job must not go green.
  const std::vector<std::string> nothing = audit::audited_nothing(audits, cases.size(), options.mutations);
  for (const auto& line : nothing) std::printf("\n%s\n", line.c_str());
  if (matrix.clean() && nothing.empty()) {
    std::printf("\nevery bug caught, every legitimate variation passed\n");
    return 0;
  }
  if (!matrix.misses.empty()) {
    std::printf("\n%zu miss(es):\n", matrix.misses.size());
    for (const auto& m : matrix.misses) std::printf("  %s\n", m.c_str());
  }
  return 1;
}

}  // namespace pao::cli

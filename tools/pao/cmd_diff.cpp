// `pao diff GOLDEN ACTUAL`: a vendor's outputs against goldens, tensor by tensor, with the
// location, pattern and histogram of every mismatch. Exit 0: all pass; 1: a mismatch; 2: bad input.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/report.hpp"
#include "pao/golden/folder.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"

namespace pao::cli {

namespace {

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace

int run_diff(int argc, char** argv) {
  CLI::App app{
      "Compares a vendor's outputs (ACTUAL) with goldens (GOLDEN). Each is a .safetensors file, an npy "
      "folder,\n"
      "or a folder of cases (GOLDEN's manifest.json lists them; ACTUAL holds <case id>.safetensors or <case "
      "id>/).\n"
      "ACTUAL may hold any of: out, v1.out, v2.out, v2.tmp_out, v2.max_logits, v2.exp_sums (decode; vLLM's "
      "names\n"
      "tmp_out, max_logits, exp_sums work too); out, prefix.out (prefix); key_cache, value_cache\n"
      "(reshape_and_cache; an integer cache's key_cache_scale, ... too); out, write_and_attend.out and the "
      "caches\n"
      "(write_and_attend).\n\n"
      "the default rule (docs/golden.md), for every output and V2 partial, against the exact computation:\n"
      "  global  max|a - exact| <= 2 x max|oracle kernel - exact| + floor   (FlashAttention's rule)\n"
      "  row     the same per (seq, head) row, at the row's own scale\n"
      "  nmse, mean ulp   the errors' energy and mean ulps against the oracle kernel's (per tensor; per\n"
      "                   row for f16/bf16)\n"
      "Goldens are checked first: manifest sha256 and the invariants of attention (pao verify).\n"
      "A required output ACTUAL lacks fails (every final output of an attention case: out, v1.out, "
      "v2.out, prefix.out;\n"
      "the written caches of reshape_and_cache and write_and_attend); optional ones (V2's partials) are "
      "listed as not compared.\n"
      "A golden folder that lacks cases of its suite (a killed pao golden, a shard not yet run) is refused.\n"
      "Exit status: 0 all pass, 1 a mismatch or nothing compared, 2 bad input (an incomplete golden folder "
      "too).\n\n"
      "examples:\n"
      "  pao diff goldens/smoke vendor_out/ --json report.json --junit report.xml\n"
      "  pao diff case.safetensors vendor_case.safetensors --reduce --policy v2.exp_sums:rtol=1e-5",
      "pao diff"};
  std::string golden, actual, json_path, junit_path;
  std::vector<std::string> policies;
  bool reduce = false, verbose = false, quiet = false;
  std::size_t max_rows = 8;
  app.add_option("GOLDEN", golden, "golden file or folder")->required();
  app.add_option("ACTUAL", actual, "vendor outputs: file or folder")->required();
  app.add_flag("--reduce", reduce,
               "also run the oracle's V2 reduce on ACTUAL's partials: tells a partial-kernel bug from a "
               "reduce-kernel bug");
  app.add_option("--json", json_path,
                 "write the report as JSON to FILE (not GOLDEN, ACTUAL, nor inside them)");
  app.add_option("--junit", junit_path,
                 "write the report as JUnit XML to FILE (not GOLDEN, ACTUAL, nor inside them)");
  app.add_option(
      "--policy", policies,
      "NAME:key=value[,...] per tensor (NAME or *): rule=flash|elementwise|nmse, k, floor, atol, rtol, nmse");
  bool allow_dtype_mismatch = false, allow_missing = false;
  std::string cases_glob;
  app.add_option("--cases", cases_glob,
                 "folders of cases: only the case ids matching this glob, e.g. 'decode-*-bf16-*'");
  app.add_flag("--allow-missing", allow_missing,
               "a case ACTUAL has no outputs for is 'not run' (neither passed nor failed); a vendor's "
               "<id>.error file is shown as its reason");
  app.add_flag("--allow-dtype-mismatch", allow_dtype_mismatch,
               "compare a vendor tensor of another dtype than the golden's by value (default: it fails)");
  app.add_flag("--verbose,-v", verbose, "details for passing tensors too");
  app.add_flag("--quiet,-q", quiet,
               "print only the last line (N passed, N failed; over several cases, the cases too)");
  app.add_option("--max-rows", max_rows, "rows per summary table (0: none)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 30))
      ->capture_default_str();
  if (const auto status = parse_command_line(app, argc, argv)) return *status;

  // Not GOLDEN, ACTUAL, nor any golden file GOLDEN reads, wherever its links lead.
  std::vector<InputPath> inputs{{"GOLDEN", golden}, {"ACTUAL", actual, false}};
  if (!json_path.empty() || !junit_path.empty())
    for (const auto& file : golden::golden_input_files(golden))
      inputs.push_back({"a golden file of GOLDEN", file});
  check_file_outputs({{"--json", json_path}, {"--junit", junit_path}}, inputs);
  diff::DiffOptions options;
  options.reduce = reduce;
  options.allow_dtype_mismatch = allow_dtype_mismatch;
  options.allow_missing = allow_missing;
  options.cases_glob = cases_glob;
  for (const auto& p : policies) options.overrides.push_back(diff::parse_policy_override(p));
  const diff::DiffReport report = diff::diff_paths(golden, actual, options);

  if (!json_path.empty()) write_text_file(json_path, diff::render_json(report));
  if (!junit_path.empty()) write_text_file(junit_path, diff::render_junit(report));
  if (quiet) {
    std::printf("%s\n", diff::summary_line(report).c_str());
  } else {
    diff::TextOptions text;
    text.verbose = verbose;
    text.max_rows = max_rows;
    std::fputs(diff::render_text(report, text).c_str(), stdout);
  }
  // Nothing compared is never a pass: a vendor CI that compared nothing must not go green.
  return report.failed() == 0 && report.compared() > 0 ? 0 : 1;
}

}  // namespace pao::cli

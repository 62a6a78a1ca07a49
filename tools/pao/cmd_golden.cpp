// `pao golden`: writes golden files for one or more case JSON files or for a suite, with a
// manifest; resumable, shardable, `--jobs` cases at a time; merges shard manifests.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli_parse.hpp"
#include "cli_progress.hpp"
#include "commands.hpp"
#include "pao/cases/case_schema.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/golden/run.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cli {

namespace {

namespace fs = std::filesystem;

/// The cases whose goldens are not what vLLM's kernels compute, and why; then those computed as
/// vLLM does (vllm_faithful) and what that dropped (vllm_compat.hpp).
void print_vllm_notes(const std::vector<cases::Case>& cases) {
  for (const bool faithful : {false, true}) {
    std::size_t n = 0;
    for (const auto& c : cases) {
      if (c.vllm_faithful != faithful) continue;
      const auto reasons = cases::vllm_incompatibilities(c);
      if (reasons.empty()) continue;
      if (n++ == 0)
        std::printf(faithful
                        ? "computed as vLLM's kernels do (--vllm-faithful; vllm_compatible true, what was "
                          "dropped in vllm_faithful_dropped):\n"
                        : "not what vLLM's kernels compute (vllm_compatible false in the metadata):\n");
      for (const auto& r : reasons) std::printf("  %s: %s\n", c.id.c_str(), r.c_str());
    }
  }
}

}  // namespace

int run_golden(int argc, char** argv) {
  CLI::App app{
      "Writes golden files: seeded inputs, exact outputs (out, out_exact) and the oracle's kernel-precision\n"
      "outputs (decode: v1.out, v2.out, v2.tmp_out, v2.max_logits, v2.exp_sums; prefix: prefix.out), one "
      "file\n"
      "per case, plus DIR/manifest.json. Re-running skips cases whose files are up to date.\n\n"
      "examples:\n"
      "  pao golden --case my_case.json --out goldens/\n"
      "  pao golden --suite smoke --out goldens/smoke\n"
      "  pao golden --suite vllm --full --shard 3/8 --out /scratch/vllm --jobs 2   (one of 8 machines)\n"
      "  pao golden --merge-manifests /scratch/vllm                               (after all 8 shards)\n"
      "  pao golden --suite long-context --list\n"
      "  pao golden --suite smoke --partition-size 256 --out g/   (a vendor whose V2 uses 256-token "
      "partitions)\n"
      "  pao golden --suite smoke --vllm-faithful --out g/        (what vLLM's kernels compute: see "
      "below)\n"
      "  pao golden --suite smoke --outputs exact,v2 --out g/     (smaller files: out, out_exact, v2.out; "
      "pao diff\n"
      "                                                            recomputes any other output it needs)\n\n"
      "Cases asking for what vLLM's own kernels do not compute (a sliding window in V1/V2, a window with\n"
      "ALiBi in prefix, a soft-cap, new tokens read back from an fp8 cache) are written as asked, with\n"
      "vllm_compatible false and the reason in their metadata; --vllm-faithful computes what vLLM does.",
      "pao golden"};
  std::vector<std::string> case_files;
  std::string suite, out_dir, shard_text, format_text = "safetensors", merge_dir, outputs_text = "all",
                                          memory_limit_text;
  bool full = false, list = false, list_suites_flag = false, list_fields = false, force = false,
       vllm_faithful = false;
  std::int32_t jobs = 1, partition_size = 0;
  app.add_option("--case", case_files, "case JSON file (repeatable)")->check(CLI::ExistingFile);
  app.add_option("--suite", suite, "suite name in data/cases (or a suite .json path)");
  app.add_option("--out", out_dir, "output folder");
  app.add_flag("--full", full, "the suite's full product instead of its pairwise cover");
  app.add_option("--shard", shard_text,
                 "i/N: only this machine's share of the suite (0 <= i < N); auto: i and N from a Slurm job "
                 "array or a Kubernetes Indexed Job (docs/cluster.md)");
  app.add_option("--jobs,-j", jobs, "cases generated at once (OpenMP threads are divided among them)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--format", format_text, "safetensors, or npy (a folder per case, bf16/fp8 as raw bits)")
      ->capture_default_str();
  app.add_option(
         "--partition-size", partition_size,
         "V2 partition size of every decode case (the vendor's), overriding the suite's; ids name it (-pN)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_flag(
      "--vllm-faithful", vllm_faithful,
      "compute what vLLM's kernels compute: drop the features they drop (ids name it: -vllmfaithful)");
  app.add_option(
         "--outputs", outputs_text,
         "the outputs each golden holds: exact (out, out_exact), v1, v2, partials, prefix, kernel (v1, v2, "
         "partials, prefix), all or none, comma-separated; pao diff recomputes the rest from the inputs")
      ->capture_default_str();
  app.add_option("--memory-limit", memory_limit_text,
                 "refuse cases whose estimated memory (times --jobs) is above SIZE (64G, 512M; 0: no check; "
                 "default: what the machine has available, or $PAO_MEMORY_LIMIT)");
  app.add_flag("--force", force, "regenerate cases even when their files are up to date");
  app.add_flag("--list", list, "print the case ids (of --suite / --case, after --full and --shard) and exit");
  app.add_flag("--list-suites", list_suites_flag, "print the suites in data/cases and exit");
  app.add_flag("--list-fields", list_fields,
               "print every field a case JSON may hold (name, type, kinds, default, id tag, meaning) as the "
               "Markdown table of docs/golden.md, and exit");
  app.add_option("--merge-manifests", merge_dir,
                 "fold DIR/manifest-shard-*-of-N.json into DIR/manifest.json");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;

  if (list_fields) {
    std::fputs(cases::case_fields_markdown().c_str(), stdout);
    return 0;
  }
  if (list_suites_flag) {
    for (const auto& s : cases::list_suites(cases::cases_dir()))
      std::printf("%-14s %s\n", s.name.c_str(), s.description.c_str());
    return 0;
  }
  if (!merge_dir.empty()) {
    const golden::Manifest m = golden::merge_shard_manifests(merge_dir);
    std::printf("merged %zu cases into %s\n", m.entries.size(),
                (fs::path(merge_dir) / "manifest.json").c_str());
    return 0;
  }
  require(suite.empty() != case_files.empty(),
          "give either --suite NAME or --case FILE (see pao golden --help)");
  require(!full || !suite.empty(), "--full applies to --suite");

  std::vector<cases::Case> cases;
  fs::path suite_file;
  if (!suite.empty()) {
    suite_file = cases::find_suite(suite, cases::cases_dir());
    cases = cases::expand_suite(suite_file, full);
    require(!cases.empty(), "--suite ", suite,
            ": selects no case (its exclude rules remove every case of its grids): nothing to write");
  } else {
    require(shard_text.empty(), "--shard applies to --suite");
    for (const auto& f : case_files) cases.push_back(cases::load_case_file(f));
  }
  for (auto& c : cases) {
    if (partition_size > 0 && kinds::kind_of(c).partitioned() && c.partition_size != partition_size)
      c = cases::override_field(c, "partition_size", std::int64_t{partition_size},
                                "p" + std::to_string(partition_size));
    if (vllm_faithful && !c.vllm_faithful && !cases::vllm_incompatibilities(c).empty())
      c = cases::override_field(c, "vllm_faithful", true, "vllmfaithful");
  }
  // Two cases of a suite that the flags made one (p128 and p256 with --partition-size 64): written once.
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t k = i + 1; k < cases.size();)
      if (cases[k] == cases[i])
        cases.erase(cases.begin() + static_cast<std::ptrdiff_t>(k));
      else
        ++k;
  std::vector<std::string> suite_cases;  // the whole run, before sharding: what a complete folder holds
  for (const auto& c : cases) suite_cases.push_back(c.id);
  std::optional<cases::Shard> shard;
  if (!shard_text.empty()) {
    shard = cases::resolve_shard(shard_text);
    cases = cases::select_shard(cases, *shard);
  }
  if (list) {
    for (const auto& c : cases) std::printf("%s\n", c.id.c_str());
    return 0;
  }
  require(!out_dir.empty(), "--out DIR is required");
  // Neither the folder nor the manifest written into it may be a case or suite file this run reads.
  for (const fs::path& written : {fs::path(out_dir), fs::path(out_dir) / "manifest.json"}) {
    refuse_output_over_input("--out", written, {{"--suite", suite_file}});
    for (const auto& f : case_files) refuse_output_over_input("--out", written, {{"--case", f}});
  }
  // Before anything is allocated: a case too large for this machine is refused, not a bad_alloc.
  set_memory_limit(memory_limit_text);
  {
    const int concurrent =
        static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(jobs), cases.size()));
    const cases::Case* largest = nullptr;
    double peak = 0;
    for (const auto& c : cases)
      if (const double b = golden::estimated_peak_memory(c); b > peak) peak = b, largest = &c;
    if (largest) golden::require_golden_memory(*largest, concurrent);
  }
  const golden::OutputSelection outputs = golden::parse_output_selection(outputs_text);

  golden::GoldenRunOptions options;
  options.out_dir = out_dir;
  options.format = golden::parse_golden_format(format_text);
  options.jobs = jobs;
  options.force = force;
  // A suite of data/cases by its name; one given as a path by that path, absolute, so that the hints
  // that name this run's command (a damaged golden, a missing case) work from any folder.
  const bool suite_is_path = suite_file != cases::cases_dir() / (suite + ".json");
  options.suite = suite.empty()   ? ""
                  : suite_is_path ? fs::absolute(suite_file).lexically_normal().string()
                                  : suite;
  options.full = full;
  options.shard = shard;
  options.suite_cases = suite_cases;
  options.outputs = outputs;
  // The flags that shape the goldens, for the regenerate hint of a damaged file.
  auto record = [&](const std::string& flag) {
    if (!options.golden_flags.empty()) options.golden_flags += ' ';
    options.golden_flags += flag;
  };
  if (partition_size > 0) record("--partition-size " + std::to_string(partition_size));
  if (vllm_faithful) record("--vllm-faithful");
  if (!outputs.all()) record("--outputs " + to_string(outputs));
  double total_cost = 0;
  for (const auto& c : cases) total_cost += golden::estimated_cost(c);
  Progress progress(cases.size(), total_cost, ::isatty(fileno(stderr)) != 0);
  std::uint64_t bytes = 0;
  options.on_event = [&](const golden::GoldenEvent& e) {
    if (e.kind == golden::GoldenEvent::Kind::written || e.kind == golden::GoldenEvent::Kind::skipped)
      bytes += e.bytes;
    progress.on_event(e);
  };
  // Ctrl-C or a scheduler's SIGTERM leaves no temporaries behind; the cases written are kept.
  install_temporary_cleanup(
      "pao golden: interrupted; the cases already written are kept: rerun the same command to resume");
  const golden::GoldenRunResult result = golden::run_golden(cases, options);
  progress.finish();
  if (result.stale_temporaries_removed > 0)
    std::printf("removed %zu temporary file(s) left by an interrupted run\n",
                result.stale_temporaries_removed);
  if (result.manifest_restarted)
    std::printf("the old manifest could not be read (--force): a new one was written\n");

  std::printf("%zu cases: %zu written, %zu up to date, %zu failed; %s in %s\nmanifest: %s\n", cases.size(),
              result.written, result.skipped, result.failures.size(),
              format_bytes(static_cast<double>(bytes)).c_str(), out_dir.c_str(),
              result.manifest_path.c_str());
  for (const auto& [id, message] : result.failures)
    std::fprintf(stderr, "failed: %s: %s\n", id.c_str(), message.c_str());
  print_vllm_notes(cases);
  if (shard) {
    std::printf(
        "shard %d of %d (%zu of the suite's %zu cases); pao verify / pao diff %s read every shard's "
        "manifest and name the shards still missing; once all are done, pao golden --merge-manifests %s "
        "folds them into manifest.json\n",
        shard->index, shard->count, cases.size(), suite_cases.size(), out_dir.c_str(), out_dir.c_str());
  }
  return result.failures.empty() ? 0 : 2;
}

}  // namespace pao::cli

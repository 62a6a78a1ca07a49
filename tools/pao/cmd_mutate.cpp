// `pao mutate`: turns goldens into "vendor outputs" — correct ones, or ones with a bug of the
// mutation library (computed for real by an independent kernel with that bug) — so that a harness,
// a CI job or a newcomer can see what `pao diff` says about a correct kernel and a broken one.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "pao/audit/mutations.hpp"
#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/golden/folder.hpp"
#include "pao/golden/reader.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/output_path.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cli {

namespace fs = std::filesystem;

namespace {

/// The oracle's own outputs of the kind's vendor kernel under a vendor's names (V2's out and
/// partials, prefix.out, the written caches; an integer cache's scales and zero points only with an
/// integer cache): a correct vendor. Outputs a golden written with --outputs left out are computed
/// from its inputs, as pao diff does.
std::vector<std::pair<std::string, Tensor>> oracle_vendor(const golden::GoldenTensors& g) {
  const kinds::KernelKind& kind = kinds::kind_of(g.golden_case);
  std::vector<std::string> names, missing;
  for (const auto& name : kind.traits().vendor_outputs) {
    if (!kinds::golden_tensor_applies(g.golden_case, name)) continue;
    names.emplace_back(name);
    if (!g.find(name)) missing.emplace_back(name);
  }
  std::vector<std::pair<std::string, Tensor>> computed;
  if (!missing.empty()) computed = kind.compute_outputs(g, missing);
  std::vector<std::pair<std::string, Tensor>> r;
  for (const auto& name : names) {
    const Tensor* t = g.find(name);
    for (const auto& [n, c] : computed)
      if (!t && n == name) t = &c;
    require(t != nullptr, "the golden of ", g.golden_case.id, " has no ", name);
    r.emplace_back(kinds::vendor_name(*kind.output(name)), Tensor::copy_of(t->view()));
  }
  return r;
}

/// The folder OUT is built in: a TemporaryFolder beside it (removed on an error or a signal),
/// renamed into place (or its files moved into an existing OUT) only once every case is written,
/// so that an error leaves OUT as it was.
class StagingFolder {
 public:
  explicit StagingFolder(const fs::path& out)
      : out_(out), folder_(prepared_parent(out), out.filename().string()) {}

  const fs::path& path() const { return folder_.path(); }

  void publish() {
    if (!fs::exists(out_)) {
      fs::rename(path(), out_);
    } else {
      require(fs::is_directory(out_), out_.string(), ": not a folder");
      for (const auto& entry : fs::directory_iterator(path()))
        fs::rename(entry.path(), out_ / entry.path().filename());
      fs::remove(path());
    }
    folder_.release();
  }

 private:
  static fs::path prepared_parent(const fs::path& out) {
    const fs::path parent = out.parent_path();
    fs::create_directories(parent);
    remove_stale_temporaries(parent);  // what a killed (SIGKILL) mutate left beside OUT
    return parent;
  }

  fs::path out_;
  TemporaryFolder folder_;
};

}  // namespace

int run_mutate(int argc, char** argv) {
  const std::string bugs = audit::mutation_table();
  CLI::App app{
      "Writes vendor-style outputs for every golden of a folder, under vLLM's names (decode: out, tmp_out,\n"
      "max_logits, exp_sums; prefix: out; write_and_attend: out and the written caches; reshape_and_cache:\n"
      "the caches): the oracle's own kernel precision (--bug none), or a kernel with one bug of the\n"
      "mutation library, computed for real (the caches then as the golden's: the bugs are attention's).\n"
      "A bug that cannot change a case (e.g. a V2 reduce bug on a case with one partition) is not planted\n"
      "there: that case gets the bug-free independent kernel, and the command says so. OUT gets its files\n"
      "only once every case is written (an error leaves it as it was); it may not be GOLDEN or inside it,\n"
      "nor any golden file GOLDEN reads. A bug planted in no case exits 1 and writes nothing.\n\n"
      "mutations (--bug):\n  none                          the oracle's kernel-precision outputs\n" +
          bugs +
          "\nexample:  pao mutate out/golden out/broken --bug window_plus_one && pao diff out/golden "
          "out/broken",
      "pao mutate"};
  std::string golden_dir, out_dir, bug = "none";
  app.add_option("GOLDEN", golden_dir, "folder of goldens")->required()->check(CLI::ExistingDirectory);
  app.add_option("OUT", out_dir, "folder for the vendor-style files (<case id>.safetensors)")->required();
  app.add_option("--bug", bug, "a mutation name, or none")->capture_default_str();
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  const audit::Mutation* mutation = bug == "none" ? nullptr : &audit::find_mutation(bug);
  refuse_output_over_input("OUT", out_dir, {{"GOLDEN", golden_dir}});
  // GOLDEN read as pao verify and pao diff read it: an incomplete folder is bad input, and one
  // without a case is nothing to mutate.
  const golden::GoldenFolder folder = golden::list_goldens(golden_dir);
  golden::require_complete(folder);
  if (folder.cases.empty()) {
    std::fprintf(stderr,
                 "pao mutate: %s lists no case: nothing to mutate, which is not a pass (%s not written)\n",
                 golden_dir.c_str(), out_dir.c_str());
    return 1;
  }
  fs::path out = fs::absolute(out_dir).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();
  // Every file it writes: a plain name inside OUT, and none of the golden files GOLDEN reads, wherever
  // their links lead (a folder without manifest may link to goldens elsewhere, OUT among them).
  std::vector<InputPath> inputs;
  for (const auto& file : golden::golden_input_files(folder))
    inputs.push_back({"a golden file of GOLDEN", file});
  for (const auto& ref : folder.cases) {
    const fs::path name(ref.id + ".safetensors");
    require(!ref.id.empty() && ref.id.front() != '.' && name.filename() == name, "GOLDEN ", golden_dir,
            ": case id '", excerpt(ref.id),
            "' is not a file name: OUT/<case id>.safetensors would leave OUT");
    refuse_output_over_input("OUT", fs::path(out_dir) / name, inputs);
  }
  StagingFolder staging(out);
  int planted = 0, clean = 0;
  for (const auto& ref : folder.cases) {
    const golden::GoldenTensors g = golden::read_golden(golden::TensorFile::open(ref.path));
    std::vector<std::pair<std::string, Tensor>> outputs;
    if (!mutation || !kinds::kind_of(g.golden_case).traits().attends) {
      outputs = oracle_vendor(g);
      ++clean;
      if (mutation)
        std::printf("not planted in %s: a case without attention (the library's bugs are attention bugs)\n",
                    ref.id.c_str());
    } else if (const std::string why = audit::not_applicable(*mutation, g.golden_case); !why.empty()) {
      outputs = audit::vendor_outputs(audit::find_mutation("independent_kernel"), g.golden_case, g);
      std::printf("not planted in %s: %s\n", ref.id.c_str(), why.c_str());
      ++clean;
    } else {
      outputs = audit::vendor_outputs(*mutation, g.golden_case, g);
      ++planted;
    }
    audit::add_written_caches(g.golden_case, g, outputs);
    NamedTensorViews views;
    for (const auto& [name, t] : outputs) views.emplace_back(name, t.view());
    write_safetensors(staging.path() / (ref.id + ".safetensors"), views);
  }
  if (mutation && planted == 0) {  // the staging folder goes: OUT is left as it was
    std::fprintf(stderr,
                 "pao mutate: %s: nothing planted: it applies to none of the %zu cases (see above), so the "
                 "outputs could not show it, which is not a pass; nothing was written to %s\n",
                 bug.c_str(), folder.cases.size(), out_dir.c_str());
    return 1;
  }
  staging.publish();
  if (mutation)
    std::printf("pao mutate: %s planted in %d of %zu cases (written to %s)\n", bug.c_str(), planted,
                folder.cases.size(), out_dir.c_str());
  else
    std::printf("pao mutate: the oracle's kernel-precision outputs of %d cases written to %s\n", clean,
                out_dir.c_str());
  return 0;
}

}  // namespace pao::cli

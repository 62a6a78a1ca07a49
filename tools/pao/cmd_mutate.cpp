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
#include "pao/golden/folder.hpp"
#include "pao/golden/reader.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cli {

namespace fs = std::filesystem;

namespace {

/// The oracle's own outputs of the kind's vendor kernel under a vendor's names (V2's out and
/// partials, prefix.out, the written caches): a correct vendor.
std::vector<std::pair<std::string, Tensor>> oracle_vendor(const golden::GoldenTensors& g) {
  const kinds::KernelKind& kind = kinds::kind_of(g.golden_case);
  std::vector<std::pair<std::string, Tensor>> r;
  for (const auto& name : kind.traits().vendor_outputs) {
    const Tensor* t = g.find(name);
    require(t != nullptr, "pao mutate: the golden of ", g.golden_case.id, " has no ", name);
    r.emplace_back(kinds::vendor_name(*kind.output(name)), Tensor::copy_of(t->view()));
  }
  return r;
}

}  // namespace

int run_mutate(int argc, char** argv) {
  const std::string bugs = audit::mutation_table();
  CLI::App app{
      "Writes vendor-style outputs for every golden of a folder, under vLLM's names (decode: out, tmp_out,\n"
      "max_logits, exp_sums; prefix: out): the oracle's own kernel precision (--bug none), or a kernel with\n"
      "one bug of the mutation library, computed for real. A bug that cannot change a case (e.g. a V2\n"
      "reduce bug on a case with one partition) is not planted there: that case gets the bug-free\n"
      "independent kernel, and the command says so.\n\n"
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
  const golden::GoldenFolder folder = golden::list_goldens(golden_dir);
  fs::create_directories(out_dir);
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
    NamedTensorViews views;
    for (const auto& [name, t] : outputs) views.emplace_back(name, t.view());
    write_safetensors(fs::path(out_dir) / (ref.id + ".safetensors"), views);
  }
  if (mutation)
    std::printf("pao mutate: %s planted in %d of %zu cases (written to %s)\n", bug.c_str(), planted,
                folder.cases.size(), out_dir.c_str());
  else
    std::printf("pao mutate: the oracle's kernel-precision outputs of %d cases written to %s\n", clean,
                out_dir.c_str());
  return 0;
}

}  // namespace pao::cli

// `pao mutate`: turns goldens into "vendor outputs" — the oracle's kernel-precision tensors under
// vendor names, optionally with one planted bug — so that a harness, a CI job or a newcomer can see
// what `pao diff` says about a correct kernel and about a broken one.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <string>

#include "commands.hpp"
#include "pao/core/error.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/paged_attention.hpp"

namespace pao::cli {

namespace fs = std::filesystem;

namespace {

const Tensor& need(const SafetensorsFile& f, const char* name, const fs::path& path) {
  const Tensor* t = f.find(name);
  require(t != nullptr, path.string(), ": no tensor '", name, "' (is it a decode golden?)");
  return *t;
}

/// The vendor tensors of one decode golden, with `bug` planted.
NamedTensorViews mutate_decode(const SafetensorsFile& g, const fs::path& path, const std::string& bug,
                               std::map<std::string, Tensor>& keep) {
  Tensor tmp = Tensor::copy_of(need(g, "v2.tmp_out", path));
  const Tensor& max_logits = need(g, "v2.max_logits", path);
  const Tensor& exp_sums = need(g, "v2.exp_sums", path);
  const Tensor& seq_lens = need(g, "seq_lens", path);
  const auto ps = g.metadata.find("partition_size");
  require(ps != g.metadata.end(), path.string(), ": __metadata__ has no partition_size");
  const std::int32_t partition_size = std::stoi(ps->second);
  if (bug == "partition") {  // partition 1 of sequence 0, head 0, scaled by 1.5
    require(tmp.size(2) > 1, path.string(), ": bug 'partition' needs a case with 2+ partitions");
    for (std::int64_t d = 0; d < tmp.size(3); ++d) tmp.set({0, 0, 1, d}, 1.5 * tmp.at({0, 0, 1, d}));
  }
  // The vendor's reduce runs on its (possibly broken) partials.
  DecodeOutputs reduced =
      paged_attention_v2_reduce({tmp, max_logits, exp_sums, seq_lens, partition_size}, Precision::kernel);
  Tensor out = std::move(reduced.out);
  if (bug == "head" && out.size(1) > 1) {  // heads 0 and 1 swapped in every sequence
    for (std::int64_t s = 0; s < out.size(0); ++s)
      for (std::int64_t d = 0; d < out.size(2); ++d) {
        const double a = out.at({s, 0, d});
        out.set({s, 0, d}, out.at({s, 1, d}));
        out.set({s, 1, d}, a);
      }
  }
  if (bug == "nan") out.set({0, 0, 0}, std::numeric_limits<double>::quiet_NaN());
  keep["out"] = std::move(out);
  keep["tmp_out"] = std::move(tmp);
  return {
      {"out", keep["out"]}, {"tmp_out", keep["tmp_out"]}, {"max_logits", max_logits}, {"exp_sums", exp_sums}};
}

}  // namespace

int run_mutate(int argc, char** argv) {
  CLI::App app{
      "Writes vendor-style outputs from goldens: the oracle's kernel-precision V2 partials and output\n"
      "under vLLM's names (out, tmp_out, max_logits, exp_sums), optionally with one planted bug, so\n"
      "that `pao diff` can be tried on a correct kernel and on a broken one.\n\n"
      "bugs: none       a correct vendor: pao diff passes\n"
      "      partition  sequence 0, head 0, partition 1 of tmp_out scaled by 1.5 (and reduced)\n"
      "      head       heads 0 and 1 of out swapped\n"
      "      nan        one NaN in out\n\n"
      "example:  pao mutate out/golden out/broken --bug partition && pao diff out/golden out/broken",
      "pao mutate"};
  std::string golden_dir, out_dir, bug = "none";
  app.add_option("GOLDEN", golden_dir, "folder of decode goldens (.safetensors)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("OUT", out_dir, "folder for the vendor-style files (same file names)")->required();
  app.add_option("--bug", bug, "none, partition, head or nan")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "partition", "head", "nan"}));
  CLI11_PARSE(app, argc, argv);

  fs::create_directories(out_dir);
  int written = 0, skipped = 0;
  for (const auto& entry : fs::directory_iterator(golden_dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    const SafetensorsFile g = read_safetensors(entry.path());
    if (g.find("v2.tmp_out") == nullptr) {  // prefix goldens: out only, the bug planted there too
      const Tensor* p = g.find("prefix.out");
      if (p == nullptr) {
        ++skipped;
        continue;
      }
      Tensor out = Tensor::copy_of(*p);
      if (bug == "nan") out.set({0, 0, 0}, std::numeric_limits<double>::quiet_NaN());
      write_safetensors(fs::path(out_dir) / entry.path().filename(), {{"out", out}});
    } else {
      std::map<std::string, Tensor> keep;
      write_safetensors(fs::path(out_dir) / entry.path().filename(),
                        mutate_decode(g, entry.path(), bug, keep));
    }
    ++written;
  }
  require(written > 0, golden_dir, ": no golden .safetensors files found");
  std::printf("pao mutate: wrote %d vendor-style file(s) to %s (bug: %s)%s\n", written, out_dir.c_str(),
              bug.c_str(), skipped ? ", skipped files without outputs" : "");
  return 0;
}

}  // namespace pao::cli

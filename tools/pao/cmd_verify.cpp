// `pao verify GOLDEN`: whether goldens can be trusted — manifest hashes, the invariants of
// attention, and (--recompute) a bit-for-bit rebuild from each case. Exit 0: every golden sound;
// 1: one is not; 2: bad input.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/verify.hpp"

namespace pao::cli {

namespace fs = std::filesystem;

namespace {

void print_check(const golden::GoldenCheck& c, bool quiet) {
  if (c.ok()) {
    if (quiet) return;
    char use[96];
    if (c.invariants.cache_write)
      std::snprintf(use, sizeof use, "the caches are the write recomputed, bit for bit");
    else if (c.invariants.kernel_outputs == 0)
      std::snprintf(use, sizeof use, "no kernel-precision output held (pao golden --outputs)");
    else
      std::snprintf(use, sizeof use, "the oracle's kernel error uses %.0f%% of its a-priori bound%s",
                    100 * c.invariants.kernel_bound_use,
                    c.invariants.exact_recomputed ? " (out_exact recomputed)" : "");
    std::printf("ok    %s  (%s%lld elements checked; %s%s)\n", c.id.c_str(),
                c.hashed ? "sha256 matches the manifest; " : "no manifest entry; ",
                static_cast<long long>(c.invariants.elements_checked), use,
                c.recomputed ? "; recomputed: bit-identical" : "");
    return;
  }
  std::printf("FAIL  %s  (%s)\n", c.id.c_str(), c.path.string().c_str());
  if (!c.error.empty()) std::printf("      %s\n", c.error.c_str());
  if (c.hash)
    std::printf("      sha256: %s is %s, the manifest records %s\n", c.hash->file.string().c_str(),
                c.hash->actual.c_str(), c.hash->expected.c_str());
  for (const auto& m : c.metadata_mismatches) std::printf("      metadata: %s\n", m.c_str());
  for (const auto& v : c.invariants.violations) std::printf("      %s\n", v.text().c_str());
  const auto shown = static_cast<std::int64_t>(c.invariants.violations.size());
  if (c.invariants.violation_count > shown)
    std::printf("      ... and %lld more invariant violations\n",
                static_cast<long long>(c.invariants.violation_count - shown));
  for (const auto& m : c.recompute_mismatches) std::printf("      recompute: %s\n", m.c_str());
}

}  // namespace

int run_verify(int argc, char** argv) {
  CLI::App app{
      "Checks that goldens can be trusted before a verdict is based on them:\n"
      "  hash        each file's sha256 against DIR/manifest.json (pao diff refuses a mismatch too)\n"
      "  metadata    the flat metadata harnesses read (scale, kernel, sizes, ...) against the case;\n"
      "              format_version against the one this pao writes; an npy golden's top-level\n"
      "              meta.json case, case_id, format and format_version against its metadata\n"
      "  invariants  out = out_exact rounded once; out_exact inside the range of the V rows it attends;\n"
      "              the oracle's kernel outputs within M (4u + 2^-20) of out_exact; non-empty V2\n"
      "              partitions with finite max_logits and exp_sums >= 1, empty ones -inf / 0 / 0;\n"
      "              an integer cache's codes inside its dtype's range (u4 0..15, u8 0..255, i8 -128..127),\n"
      "              its used scales finite and positive, its zero points integers of that range\n"
      "  recompute   (--recompute) each golden rebuilt from its case, bit for bit (as slow as pao golden)\n"
      "A folder that lacks cases of its suite (a killed pao golden, a shard not yet run) is refused.\n"
      "Exit status: 0 every golden sound, 1 one is not (or none to verify), 2 bad input.\n\n"
      "examples:\n"
      "  pao verify out/golden\n"
      "  pao verify out/golden/decode-h4x4-d64-b16-f16-auto-p128-n3-L300-s0.safetensors --recompute",
      "pao verify"};
  std::string golden;
  bool recompute = false, quiet = false;
  app.add_option("GOLDEN", golden, "golden folder (with or without manifest.json), file or npy folder")
      ->required();
  app.add_flag("--recompute", recompute, "also rebuild every golden from its case and compare bit for bit");
  app.add_flag("--quiet,-q", quiet, "print only failing goldens and the last line");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  require(fs::exists(golden), golden, ": no such file or folder");
  const bool one = fs::is_regular_file(golden) || fs::exists(fs::path(golden) / "meta.json");
  const golden::GoldenFolder folder = one ? golden::golden_of_one(golden) : golden::list_goldens(golden);
  golden::require_complete(
      folder);  // an incomplete folder is bad input: its missing cases were never checked
  std::int64_t sound = 0, unsound = 0;
  for (const auto& ref : folder.cases) {
    const golden::GoldenCheck c = golden::verify_golden(folder, ref, recompute);
    print_check(c, quiet);
    std::fflush(stdout);
    (c.ok() ? sound : unsound) += 1;
  }
  std::printf("%lld sound, %lld not sound%s%s\n", static_cast<long long>(sound),
              static_cast<long long>(unsound),
              folder.manifest ? "" : " (no manifest.json: hashes and completeness not checked)",
              sound + unsound == 0 ? "; nothing was verified, which is not a pass" : "");
  return unsound == 0 && sound > 0 ? 0 : 1;
}

}  // namespace pao::cli

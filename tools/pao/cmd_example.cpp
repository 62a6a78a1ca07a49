// `pao example`: one decode case on the embedded defaults, run through V1 and V2 in both
// precisions, with a short summary of the differences between them.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cli {

namespace {

double max_abs_diff(const Tensor& a, const std::vector<double>& ref) {
  const auto v = a.to_f64();
  double m = 0;
  for (std::size_t i = 0; i < v.size(); ++i) m = std::max(m, std::abs(v[i] - ref[i]));
  return m;
}

}  // namespace

int run_example(int argc, char** argv) {
  CLI::App app{
      "Runs one decode case (4 sequences, 32 query / 8 KV heads, head size 128, block 16, f16,\n"
      "sequence lengths 1, 1000, 2049 and 4096) through paged attention V1 and V2 in exact and\n"
      "kernel precision, and prints the largest difference of each output from the exact V1.\n\n"
      "example:  pao example --partition-size 1024 --dtype bf16",
      "pao example"};
  std::int32_t partition_size = KernelTuning{}.partition_size;
  std::string dtype = "f16", cache = "auto";
  std::uint64_t seed = 0;
  app.add_option("--partition-size", partition_size, "V2 partition size (a multiple of the block size, 16)")
      ->capture_default_str();
  app.add_option("--dtype", dtype, "query/out dtype: " + dtype_names(is_activation))->capture_default_str();
  app.add_option("--kv-cache-dtype", cache,
                 "auto (= dtype) or a cache format: " + cases::kv_cache_dtype_choices())
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the case's values")
      ->check(finite_range(0, 18446744073709551615.0))
      ->capture_default_str();
  if (const auto status = parse_command_line(app, argc, argv)) return *status;

  // Every option is checked before anything is printed or computed.
  const bool activation_name = std::any_of(
      kDTypes.begin(), kDTypes.end(), [&](const DTypeInfo& d) { return d.activation && d.name == dtype; });
  require(activation_name, "--dtype ", dtype, ": expected ", dtype_names(is_activation, " or "),
          " (the query / out dtype; a quantised cache is --kv-cache-dtype ",
          dtype_names(is_cache_format, " or "), ")");
  const DType activation = parse_dtype(dtype, "--dtype");
  cases::parse_kv_cache_dtype(cache, "--kv-cache-dtype");
  cases::Case spec;
  spec.partition_size = partition_size;
  if (const auto v = check_tuning(spec, KernelVariant::v2, spec.block_size))
    fail("--", std::string(v->field) == "partition_size" ? "partition-size" : v->field, " ", v->rule);

  spec.num_seqs = 4;
  spec.num_heads = 32;
  spec.num_kv_heads = 8;
  spec.head_size = 128;
  spec.block_size = 16;
  spec.seq_lens = {1, 1000, 2049, 4096};
  spec.dtype = activation;
  spec.kv_cache_dtype = cases::parse_kv_cache_dtype(cache, "--kv-cache-dtype");
  spec.seed = seed;
  const cases::DecodeCase c = cases::make_decode_case(spec);

  std::printf(
      "case: %d seqs, heads %d/%d, head_size %d, block %d, %s (cache %s), seq_lens 1 1000 2049 4096\n",
      spec.num_seqs, spec.num_heads, spec.num_kv_heads, spec.head_size, spec.block_size,
      dtype_name(spec.dtype).data(), dtype_name(spec.cache_storage_dtype()).data());
  auto timed = [&](auto fn) {
    const auto t0 = std::chrono::steady_clock::now();
    DecodeOutputs o = fn();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return std::make_pair(std::move(o), ms);
  };
  auto [truth, t_truth] = timed([&] { return paged_attention_v1(c.args(), Precision::exact, spec); });
  const auto ref = truth.out_f64.to_f64();
  std::printf("\n%-22s %10s %16s\n", "kernel / precision", "time ms", "max|out - exact|");
  std::printf("%-22s %10.1f %16.3e   (the truth, before rounding: 0)\n", "v1 exact (rounded)", t_truth,
              max_abs_diff(truth.out, ref));
  for (auto prec : {Precision::exact, Precision::kernel}) {
    for (bool v2 : {false, true}) {
      if (!v2 && prec == Precision::exact) continue;
      auto [o, ms] = timed([&] {
        return v2 ? paged_attention_v2(c.args(), prec, spec) : paged_attention_v1(c.args(), prec, spec);
      });
      char name[64];
      std::snprintf(name, sizeof name, "%s %s", v2 ? "v2" : "v1",
                    prec == Precision::exact ? "exact" : "kernel");
      std::printf("%-22s %10.1f %16.3e\n", name, ms, max_abs_diff(o.out, ref));
    }
  }
  std::printf("\nV2 uses partitions of %d tokens (%d for the longest sequence).\n", partition_size,
              partitions_of_sequence(4096, partition_size));
  return 0;
}

}  // namespace pao::cli

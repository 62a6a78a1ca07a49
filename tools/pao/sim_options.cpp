// CLI11 bindings of the options shared by the `pao sim` subcommands.
#include "sim_options.hpp"

#include <filesystem>

#include "cli_parse.hpp"
#include "pao/cases/case.hpp"
#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/golden/reader.hpp"

namespace pao::sim {

void DeviceOptions::add_to(CLI::App& app) {
  app.add_option("--device,-d", device,
                 "device descriptor: a name in data/devices (bi-v100, a100-40gb, h100-sxm, h200) or a path "
                 "to a .json")
      ->capture_default_str();
  app.add_option(
      "--set", sets,
      "override a descriptor field for a what-if, e.g. --set num_sms=32 --set dram_achievable_gbps=900 "
      "(repeatable; any field of the descriptor)");
}

Device DeviceOptions::load() const {
  Device d = load_device(device);
  for (const auto& s : sets) apply_override(d, s);
  return d;
}

void FitOptions::add_to(CLI::App& app, const char* json_help, const char* per_fit) {
  app.add_option(
      "--measurements,-m", measurements,
      "CSV: kernel,num_seqs,num_heads,head_size,seq_len,time_us[,num_kv_heads,block_size,query_len,"
      "partition_size,max_seq_len,dtype,kv_cache_dtype,timing(gpu|host|loop),device,stddev_us,repeats,"
      "achieved_gbps,implementation,group,source,assumed,note]; '#' lines are comments (docs/simulator.md); "
      "repeat it for several files at once (e.g. two implementations timed on one GPU)");
  app.add_flag("--json", json, json_help);
  app.add_option("--param", parameters,
                 "descriptor fields to fit (repeatable; default: dram_achievable_gbps iteration_latency_us "
                 "cta_dispatch_overhead_us inter_kernel_gap_us issue_efficiency; + launch_latency_us with "
                 "host timing)");
  app.add_option("--max-iterations", max_iterations, std::string("Levenberg-Marquardt iterations") + per_fit)
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--jobs,-j", jobs, "threads; 0: all cores (results do not depend on it)")
      ->check(CLI::Range(0, 4096));
}

std::vector<Measurement> FitOptions::load(const char* command) const {
  require(!measurements.empty(), command, ": --measurements FILE.csv is required");
  return load_measurements(measurements);
}

void WorkloadOptions::add_to(CLI::App& app) {
  auto* g = &app;
  g->add_option("--case", case_file,
                "workload from a case: a case JSON (docs/golden.md: what `pao golden --case` takes) or a "
                "golden file; replaces the flags below, and its partition size / prefix tiles become the "
                "kernel defaults");
  using cli::at_least;
  g->add_option("--num-seqs", num_seqs, "sequences in the batch")->check(at_least(1))->capture_default_str();
  g->add_option("--num-heads", num_heads, "query heads")->check(at_least(1))->capture_default_str();
  g->add_option("--num-kv-heads", num_kv_heads, "KV heads (GQA/MQA); default: = --num-heads")
      ->check(at_least(0));
  g->add_option("--head-size", head_size, "head size")->check(at_least(1))->capture_default_str();
  g->add_option("--block-size", block_size, "tokens per KV-cache block")
      ->check(at_least(1))
      ->capture_default_str();
  g->add_option("--seq-len", seq_len, "tokens of every sequence (context + new)")
      ->check(at_least(0))
      ->capture_default_str();
  g->add_option("--seq-lens", seq_lens, "per-sequence lengths, e.g. 100,4000,32000 (sets --num-seqs)");
  g->add_option("--query-len", query_len, "prefix/fallback: new tokens per sequence (default 1 = decode)")
      ->check(at_least(0));
  g->add_option("--query-lens", query_lens, "prefix/fallback: per-sequence new tokens, e.g. 512,512,1");
  g->add_option(
       "--max-seq-len", max_seq_len,
       "max_seq_len passed to the kernel (V2 partitions, V1 shared memory); default: longest sequence")
      ->check(at_least(0));
  g->add_option("--dtype", dtype, "activation dtype: f16, bf16, f32")->capture_default_str();
  g->add_option("--kv-cache-dtype", kv_cache_dtype,
                "KV cache dtype: " + cases::kv_cache_dtype_choices() +
                    ", u4 (auto = --dtype; an integer cache u8, i8, u4 in OpenVINO's layout: key scales per "
                    "channel, value per token)")
      ->capture_default_str();
}

cases::Case WorkloadOptions::to_case() const {
  if (!case_file.empty()) {
    const std::string ext = std::filesystem::path(case_file).extension().string();
    if (ext == ".json") return cases::load_case_file(case_file);
    return golden::golden_case_of(golden::TensorFile::open(case_file));
  }
  cases::Case c;
  c.num_heads = num_heads;
  c.num_kv_heads = num_kv_heads > 0 ? num_kv_heads : num_heads;
  c.head_size = head_size;
  c.block_size = block_size;
  c.max_seq_len = max_seq_len;
  c.dtype = parse_dtype(dtype, "--dtype");
  cases::set_kv_cache_dtype(c, kv_cache_dtype, "--kv-cache-dtype");
  if (!seq_lens.empty()) {
    c.seq_lens = parse_int_list(seq_lens, "--seq-lens");
  } else {
    require(num_seqs >= 1, "--num-seqs = ", num_seqs,
            ": must be >= 1 (an empty batch launches nothing to time)");
    // Before the lists are built: a length per sequence in the case, the workload and their copies.
    require_memory("--num-seqs " + std::to_string(num_seqs) + " (the per-sequence lengths)", 32.0 * num_seqs,
                   "lower --num-seqs");
    c.seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  }
  c.num_seqs = static_cast<std::int32_t>(c.seq_lens.size());
  if (!query_lens.empty()) {
    c.kernel = cases::CaseKernel::prefix;
    c.query_lens = parse_int_list(query_lens, "--query-lens");
  } else if (query_len > 0) {
    c.kernel = cases::CaseKernel::prefix;
    c.query_lens.assign(c.seq_lens.size(), query_len);
  }
  return c;
}

void KernelOptions::add_to(CLI::App& app) {
  this->app = &app;
  using cli::at_least;
  app.add_option("--partition-size", flags.partition_size, "V2 partition size in tokens (vLLM: 512)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--threads", flags.threads_per_cta, "threads per decode CTA (vLLM NUM_THREADS)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--regs", flags.registers_per_thread,
                 "registers per thread of the main kernel (default: the model's assumption per kernel)")
      ->check(at_least(0));
  app.add_option("--block-m", flags.block_m, "prefix: query rows per CTA (BLOCK_M)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--block-n", flags.block_n, "prefix: keys per new-token tile (BLOCK_N)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--context-tile", flags.context_tile,
                 "prefix: keys per context tile (vLLM's TRITON_BLOCK_SIZE)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--fallback-tile", flags.fallback_tile, "fallback: tokens per host-loop K tile")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--implementation",
         [this](const std::string& text) {
           flags.implementation = parse_kernel_implementation(text, "--implementation");
         },
         "whose compiled decode kernels to time: vllm (vLLM's, the default), pao-cuda (pao's own CUDA "
         "kernels, with their instruction counts measured under GPGPU-Sim) or pao-cuda-pre38 (pao's kernels "
         "before issue #38's cuts, which the H200 rows timed); docs/gpgpusim.md")
      ->type_name("vllm|pao-cuda|pao-cuda-pre38");
}

KernelConfig KernelOptions::defaults(const cases::Case* from_case) const {
  KernelConfig k;
  if (from_case) k = kernel_defaults_of(*from_case, k);
  const auto given = [&](const char* flag) { return app == nullptr || app->count(flag) > 0; };
  const auto take = [&](const char* flag, std::int32_t& field, std::int32_t value) {
    if (!from_case || given(flag)) field = value;
  };
  take("--partition-size", k.partition_size, flags.partition_size);
  take("--threads", k.threads_per_cta, flags.threads_per_cta);
  take("--block-m", k.block_m, flags.block_m);
  take("--block-n", k.block_n, flags.block_n);
  take("--context-tile", k.context_tile, flags.context_tile);
  k.registers_per_thread = flags.registers_per_thread;
  k.fallback_tile = flags.fallback_tile;
  k.implementation = flags.implementation;
  return k;
}

}  // namespace pao::sim

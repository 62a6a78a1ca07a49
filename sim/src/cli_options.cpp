// CLI11 bindings of the options shared by the `pao sim` subcommands.
#include "pao/sim/cli_options.hpp"

#include "pao/error.hpp"

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

void WorkloadOptions::add_to(CLI::App& app) {
  auto* g = &app;
  g->add_option("--case", case_file,
                "workload from a case JSON {num_seqs, num_heads, num_kv_heads, head_size, block_size, "
                "seq_lens|seq_len, query_lens|query_len, max_seq_len, dtype, kv_cache_dtype}; replaces the "
                "flags below");
  g->add_option("--num-seqs", num_seqs, "sequences in the batch")->capture_default_str();
  g->add_option("--num-heads", num_heads, "query heads")->capture_default_str();
  g->add_option("--num-kv-heads", num_kv_heads, "KV heads (GQA/MQA); default: = --num-heads");
  g->add_option("--head-size", head_size, "head size")->capture_default_str();
  g->add_option("--block-size", block_size, "tokens per KV-cache block")->capture_default_str();
  g->add_option("--seq-len", seq_len, "tokens of every sequence (context + new)")->capture_default_str();
  g->add_option("--seq-lens", seq_lens, "per-sequence lengths, e.g. 100,4000,32000 (sets --num-seqs)");
  g->add_option("--query-len", query_len, "prefix/fallback: new tokens per sequence (default 1 = decode)");
  g->add_option("--query-lens", query_lens, "prefix/fallback: per-sequence new tokens, e.g. 512,512,1");
  g->add_option(
      "--max-seq-len", max_seq_len,
      "max_seq_len passed to the kernel (V2 partitions, V1 shared memory); default: longest sequence");
  g->add_option("--dtype", dtype, "activation dtype: f16, bf16, f32")->capture_default_str();
  g->add_option("--kv-cache-dtype", kv_cache_dtype,
                "KV cache dtype: auto (= --dtype), fp8, fp8_e4m3, fp8_e5m2")
      ->capture_default_str();
}

Workload WorkloadOptions::build() const {
  if (!case_file.empty()) return load_workload_json(case_file);
  Workload w;
  w.num_seqs = num_seqs;
  w.num_heads = num_heads;
  w.num_kv_heads = num_kv_heads > 0 ? num_kv_heads : num_heads;
  w.head_size = head_size;
  w.block_size = block_size;
  w.max_seq_len = max_seq_len;
  w.dtype = parse_dtype(dtype, "--dtype");
  w.kv_cache_dtype = parse_kv_cache_dtype(kv_cache_dtype, w.dtype);
  if (!seq_lens.empty()) {
    w.seq_lens = parse_int_list(seq_lens, "--seq-lens");
    w.num_seqs = static_cast<std::int32_t>(w.seq_lens.size());
  } else {
    require(num_seqs >= 0, "--num-seqs = ", num_seqs, ": must be >= 0");
    w.seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  }
  if (!query_lens.empty()) {
    w.query_lens = parse_int_list(query_lens, "--query-lens");
  } else if (query_len > 0) {
    w.query_lens.assign(w.seq_lens.size(), query_len);
  }
  validate_workload(w);
  return w;
}

void KernelOptions::add_to(CLI::App& app) {
  app.add_option("--partition-size", partition_size, "V2 partition size in tokens (vLLM: 512)")
      ->capture_default_str();
  app.add_option("--threads", threads_per_cta, "threads per decode CTA (vLLM NUM_THREADS)")
      ->capture_default_str();
  app.add_option("--regs", registers_per_thread,
                 "registers per thread of the main kernel (default: the model's assumption per kernel)");
  app.add_option("--block-m", block_m, "prefix: query rows per CTA (BLOCK_M)")->capture_default_str();
  app.add_option("--block-n", block_n, "prefix: keys per new-token tile (BLOCK_N)")->capture_default_str();
  app.add_option("--context-tile", context_tile, "prefix: keys per context tile (vLLM's TRITON_BLOCK_SIZE)")
      ->capture_default_str();
  app.add_option("--fallback-tile", fallback_tile, "fallback: tokens per host-loop K tile")
      ->capture_default_str();
}

KernelConfig KernelOptions::defaults() const {
  KernelConfig k;
  k.partition_size = partition_size;
  k.threads_per_cta = threads_per_cta;
  k.registers_per_thread = registers_per_thread;
  k.block_m = block_m;
  k.block_n = block_n;
  k.context_tile = context_tile;
  k.fallback_tile = fallback_tile;
  return k;
}

}  // namespace pao::sim

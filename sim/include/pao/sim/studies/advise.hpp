// Dispatch advice: the simulated best of {V1, V2 with several partition sizes} over a grid of
// (num_seqs, num_heads, max_seq_len), and how two published rules compare against it:
//   vLLM   use_v1 = max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs*num_heads > 512),
//          partition 512 otherwise (vllm/attention/ops/paged_attn.py);
//   FlashAttention-2's num_splits_heuristic for split-KV decode, mapped onto V2 (one split = V1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// vLLM's choice: true = V1, false = V2 with `partition_size`.
bool vllm_use_v1(std::int64_t num_seqs, std::int64_t num_heads, std::int64_t max_seq_len,
                 std::int64_t partition_size = KernelTuning{}.partition_size);

/// FlashAttention-2's split heuristic. If the grid already nearly fills the GPU
/// (batch_nheads_mblocks >= 0.8 * num_sms) one split; else, over the eligible split counts
/// 1..min(max_splits, num_sms, num_n_blocks) (a count is eligible when it changes
/// ceil(num_n_blocks / splits)), the wave efficiency n / ceil(n) with
/// n = batch_nheads_mblocks * splits / num_sms, and the smallest count within 85% of the best.
int fa_num_splits(std::int64_t batch_nheads_mblocks, std::int64_t num_sms, std::int64_t num_n_blocks,
                  std::int64_t max_splits = 128);
/// FlashAttention-2's split-KV key block: 256 for head_size <= 64, 128 up to 128, else 64.
int fa_block_n(std::int64_t head_size);
/// FlashAttention's choice mapped to pao's kernels: V1 for one split, else V2 whose partition holds
/// ceil(num_n_blocks / splits) key blocks (rounded up to the cache block size). FlashAttention-2
/// passes twice the SM count (it assumes 2 CTAs of 128 threads per SM): `sm_factor`.
KernelConfig fa_choice(const Workload& workload, const Device& device, const KernelConfig& defaults,
                       std::int64_t sm_factor = 2);

struct AdviseGrid {
  std::vector<std::int32_t> num_seqs = {1, 4, 16, 64};
  std::vector<std::int32_t> num_heads = {8, 32, 64};
  std::vector<std::int32_t> max_seq_lens = {512, 1024, 2048, 4096, 8192, 16384, 32768};
  std::vector<std::int32_t> partitions = {256, 512, 1024, 2048};
  std::int32_t gqa_group = 1;  // num_heads / num_kv_heads
  Workload base;               // head_size, block_size, dtypes
  KernelConfig kernel_defaults;
  int threads = 0;
};

struct AdviseCell {
  std::int32_t num_seqs = 0, num_heads = 0, max_seq_len = 0;
  std::vector<double> times;  // per candidate (V1, then V2 per partition); +inf: does not fit
  std::size_t best = 0;       // index into candidates: the fastest
  std::size_t advised = 0;    // the simplest candidate within 2% of the fastest (V1, then
                              // V2-512, then smaller partitions): near-ties do not flip the rule
  std::size_t vllm = 0;       // vLLM's choice (a candidate index)
  KernelConfig fa;            // FlashAttention's choice
  double fa_time = 0;
  double best_time() const { return times[best]; }
};

struct RuleScore {
  std::string name;
  std::size_t cells = 0;       // cells where some candidate runs
  double accuracy = 0;         // cells where the choice is within 2% of the best
  double class_accuracy = 0;   // cells where V1-vs-V2 matches the best's
  std::size_t cannot_run = 0;  // cells where the rule's choice does not fit on the device
  double mean_regret = 0;      // mean of time(choice) / time(best) - 1, over cells where it runs
  double worst_regret = 0;
  std::string worst_cell;
};

struct AdviseResult {
  std::vector<KernelConfig> candidates;
  std::vector<AdviseCell> cells;  // num_seqs slowest, then num_heads, then max_seq_len
  RuleScore vllm, fa;
  /// Runs the model refused (a workload too large for the memory, a tuning the kernel cannot
  /// take): their times are +inf, as for a kernel that does not fit; the first one's reason.
  std::size_t refused_runs = 0;
  std::string first_refusal;
};

AdviseResult run_advise(const Device& device, const AdviseGrid& grid);

/// The advised rule as a small table (rows: num_seqs x num_heads, columns: max_seq_len).
std::string advised_rule_table(const AdviseResult& result);
/// The same as JSON a serving engine can embed: {"device", "rows": [{num_seqs, num_heads,
/// max_seq_len, kernel, partition_size, time_us, speedup_vs_vllm}]}.
std::string advised_rule_json(const AdviseResult& result, const Device& device);

}  // namespace pao::sim

// Dispatch rules: vLLM's use_v1, FlashAttention's num_splits heuristic and the advise grid.
#include <doctest/doctest.h>

#include <cmath>

#include "pao/sim/model/device.hpp"
#include "pao/sim/studies/advise.hpp"

using namespace pao::sim;
using pao::KernelVariant;

TEST_CASE("sim advise: vLLM's use_v1 rule") {
  CHECK(vllm_use_v1(1, 32, 512));        // one partition
  CHECK_FALSE(vllm_use_v1(1, 32, 513));  // two partitions, only 32 work items
  CHECK(vllm_use_v1(17, 32, 8192));      // 544 > 512 work items
  CHECK_FALSE(vllm_use_v1(16, 32, 8192));
  CHECK_FALSE(vllm_use_v1(64, 64, 8193));  // beyond 8192 always V2
}

TEST_CASE("sim advise: FlashAttention's num_splits heuristic") {
  // Enough work to nearly fill the GPU: one split.
  CHECK(fa_num_splits(87, 108, 64) == 1);
  // 16 work items on 108 SMs with 64 key blocks: efficiency of s splits = n / ceil(n), n = 16s/108.
  // The best eligible one is 0.963 (s = 13: 1.93 waves); the first within 85% of it is s = 6
  // (96/108 = 0.889 of one wave).
  CHECK(fa_num_splits(16, 108, 64) == 6);
  // One work item, 3 key blocks: at most 3 splits, efficiencies 1/8, 2/8, 3/8 of the SMs.
  CHECK(fa_num_splits(1, 8, 3) == 3);
  // Ineligible counts are skipped: with 4 blocks, 3 splits (2+2+0) is not a split of its own.
  CHECK(fa_num_splits(1, 4, 4) == 4);
  CHECK(fa_block_n(64) == 256);
  CHECK(fa_block_n(128) == 128);
  CHECK(fa_block_n(256) == 64);
  // Mapping onto pao's kernels: one split = V1; else V2 with the split's keys per partition.
  const Device h200 = load_device("h200");
  Workload w;
  w.num_seqs = 1;
  w.num_heads = 8;
  w.num_kv_heads = 8;
  w.seq_lens = {8192};
  const KernelConfig k = fa_choice(w, h200, KernelConfig{});
  CHECK(k.kind == KernelVariant::v2);
  const int splits = fa_num_splits(8, 2 * 132, 64);
  CHECK(k.partition_size == ((64 + splits - 1) / splits) * 128);
  w.num_seqs = 64;
  CHECK(fa_choice(w, h200, KernelConfig{}).kind == KernelVariant::v1);
}

TEST_CASE("sim advise: a small grid; the best is never beaten by a rule") {
  const Device d = load_device("bi-v100");
  AdviseGrid g;
  g.num_seqs = {1, 16};
  g.num_heads = {8, 32};
  g.max_seq_lens = {256, 2048, 8192};
  g.partitions = {512, 1024};
  const AdviseResult r = run_advise(d, g);
  REQUIRE(r.cells.size() == 12);
  REQUIRE(r.candidates.size() == 3);
  for (const auto& c : r.cells) {
    INFO(c.num_seqs << " x " << c.num_heads << " len " << c.max_seq_len);
    CHECK(c.best_time() <= c.times[c.vllm]);
    CHECK(c.best_time() <=
          c.fa_time * (1 + 1e-9) +
              (c.fa.kind == KernelVariant::v2 && c.fa.partition_size != 512 && c.fa.partition_size != 1024
                   ? 1e300
                   : 0));
  }
  CHECK(r.vllm.accuracy >= 0);
  CHECK(r.vllm.accuracy <= 1);
  CHECK(r.vllm.mean_regret >= 0);
  CHECK(r.vllm.worst_regret >= r.vllm.mean_regret);
  CHECK(advised_rule_table(r).find("v1") != std::string::npos);
  CHECK(advised_rule_json(r, d).find("\"rows\"") != std::string::npos);
}

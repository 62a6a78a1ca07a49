// Kernel models: what each CTA reads, writes, computes and waits for, from the plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pao/core/error.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/fallback_model.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/model/prefix_workload.hpp"

using namespace pao::sim;

namespace {

Workload decode(std::vector<std::int32_t> lens, std::int32_t heads = 8, std::int32_t kv_heads = 8) {
  Workload w;
  w.num_seqs = static_cast<std::int32_t>(lens.size());
  w.num_heads = heads;
  w.num_kv_heads = kv_heads;
  w.head_size = 128;
  w.block_size = 16;
  w.seq_lens = std::move(lens);
  return w;
}

}  // namespace

TEST_CASE("sim model: V1 and V2 launches follow the plan") {
  const Device d = load_device("bi-v100");
  const Workload w = decode({1000, 0, 40});
  KernelConfig v2 = parse_kernel_spec("v2:512", {});
  const auto launches = build_launches(d, w, v2);
  REQUIRE(launches.size() == 2);
  const auto plan = decode_plan(d, w, v2);
  REQUIRE(launches[0].ctas.size() == plan.ctas.size());
  REQUIRE(launches[1].ctas.size() == plan.reduce_ctas.size());
  for (std::size_t i = 0; i < plan.ctas.size(); ++i) {
    const auto& cta = plan.ctas[i];
    const auto& work = launches[0].ctas[i];
    INFO("cta " << i << " seq " << cta.seq << " partition " << cta.partition);
    CHECK(work.seq == cta.seq);
    CHECK(work.head == cta.head);
    CHECK(work.partition == cta.partition);
    if (cta.empty()) {
      // An empty partition returns at once: no bytes, no work, no iterations.
      CHECK(work.dram_bytes == 0);
      CHECK(work.iterations == 0);
    } else {
      const int blocks = cta.blocks(16).size();
      CHECK(work.iterations == 2 * ((blocks + 1) / 2) + 2);  // 2 warps of 64 on the BI-V100
      CHECK(work.dram_bytes == doctest::Approx(256 + blocks * 4 + 2.0 * blocks * 16 * 128 * 2 + 256 + 8));
    }
  }
  // Reduce: one partition copies tmp_out to out; several read every partial result.
  CHECK(launches[1].ctas[0].dram_bytes == doctest::Approx(2 * (8 + 256) + 256));  // seq 0: 2 partitions
  CHECK(launches[1].ctas[8].dram_bytes == doctest::Approx(256));                  // seq 1: empty, writes out
  CHECK(launches[1].ctas[16].dram_bytes == doctest::Approx(2 * 256));             // seq 2: 1 partition
  // V1 shared memory grows with max_seq_len, as in vLLM.
  const auto v1 = build_launches(d, decode({8000}), parse_kernel_spec("v1", {}));
  CHECK(v1[0].resources.shared_bytes >= 8000 * 4);
  CHECK(launches[0].resources.shared_bytes < 4096);
}

TEST_CASE("sim model: GQA shares K/V through L2, fp8 halves it, an integer cache adds its scales") {
  const Device d = load_device("h200");
  const auto bytes = [&](const Workload& w) {
    double kv = 0;
    for (const auto& l : build_launches(d, w, parse_kernel_spec("v1", {}))) kv += l.total_dram_bytes();
    return kv;
  };
  const double mha = bytes(decode({4096}, 8, 8));
  const double gqa = bytes(decode({4096}, 8, 1));
  Workload fp8 = decode({4096}, 8, 8);
  fp8.kv_cache_dtype = pao::DType::fp8_e4m3;
  const double kv_mha = 8 * 2.0 * 4096 * 128 * 2;
  CHECK(mha - gqa == doctest::Approx(kv_mha * 7 / 8));
  CHECK(mha - bytes(fp8) == doctest::Approx(kv_mha / 2));
  // A u8 cache reads one byte per element plus its scales and zero points: key by channel (a
  // pair of f32 per dim of a 16-token block: 8 / 16 bytes per element), value by token (a pair per
  // 128-dim row: 8 / 128), f16 scales halving them.
  Workload u8 = fp8;
  u8.kv_cache_dtype = pao::DType::u8;
  const double kv_elems = kv_mha / 2;
  CHECK(bytes(u8) - bytes(fp8) == doctest::Approx(kv_elems * (8.0 / 16 + 8.0 / 128) / 2));
  u8.kv_quant.scale_dtype = pao::DType::f16;
  u8.kv_quant.value = {pao::QuantGranularity::group, 32};
  CHECK(bytes(u8) - bytes(fp8) == doctest::Approx(kv_elems * (6.0 / 16 + 6.0 / 32) / 2));
  // The logical (L2) traffic of a GQA launch is the group size times its K/V DRAM bytes.
  const auto l = build_launches(d, decode({4096}, 8, 1), parse_kernel_spec("v1", {}));
  CHECK(l[0].logical_per_dram_byte > 7.0);
  CHECK(l[0].logical_per_dram_byte < 8.0);
}

TEST_CASE("sim model: prefix work follows the lib's prefix plan") {
  Workload w = decode({2048 + 300, 100}, 4, 2);
  w.query_lens = {300, 100};
  KernelConfig k = parse_kernel_spec("prefix:128x64", {});
  const auto plan = prefix_plan(w, k);
  const Device d = load_device("a100-40gb");
  const auto launches = build_launches(d, w, k);
  REQUIRE(launches.size() == 1);
  const auto& work = launches[0].ctas;
  REQUIRE(work.size() == plan.ctas.size());
  CHECK(work.size() == 2u * 4u * 3u);  // grid (batch, head, ceil(300 / 128)), batch fastest
  CHECK(launches[0].compute == ComputeUnit::matrix_fp16);
  for (std::size_t i = 0; i < work.size(); ++i) {
    const auto& c = plan.ctas[i];
    INFO("seq " << c.seq << " head " << c.head << " tile " << c.m_tile);
    CHECK(work[i].seq == c.seq);
    CHECK(work[i].partition == c.m_tile);
    CHECK(work[i].iterations == (c.num_tiles() > 0 ? c.num_tiles() + 1 : 0));
    // GQA pairs share K/V (2 sequences x 2 heads fit in a wave): half the K/V bytes each.
    const double kv =
        2.0 * c.context_keys * 128 * 2 + std::ceil(c.ctx_len / 16.0) * 4 + 2.0 * c.new_keys * 256;
    CHECK(work[i].dram_bytes == doctest::Approx(2.0 * c.num_rows() * 256 + kv / 2));
  }
  // Sequence 1 has no rows in tiles 1 and 2: vLLM still walks its (empty) context and stores
  // nothing; sequence 0's later tiles walk more new-token tiles (causal).
  const auto index = [&](int seq, int head, int m) {
    return static_cast<std::size_t>((m * 4 + head) * 2 + seq);
  };
  CHECK(work[index(1, 0, 1)].dram_bytes == 0);
  CHECK(work[index(0, 0, 0)].iterations < work[index(0, 0, 2)].iterations);
  CHECK_THROWS_AS(build_launches(
                      d,
                      [] {
                        Workload bad = decode({10}, 4, 2);
                        bad.query_lens = {11};
                        return bad;
                      }(),
                      k),
                  pao::Error);
}

TEST_CASE("sim model: the fallback is a chain of launches, each paying the host") {
  const Device d = load_device("bi-v100");
  const Workload w = decode({4096, 1000}, 8, 8);
  const auto launches = build_launches(d, w, parse_kernel_spec("fallback:1024", {}));
  CHECK(launches.size() == 4u * kFallbackOpsPerTile + 1u);
  for (const auto& l : launches) CHECK(l.host_issue_delay_us == d.host_op_overhead_us);
  const SimResult r = simulate(d, launches);
  REQUIRE(r.ok);
  // At least one host op overhead per launch, and far slower than the native kernel.
  CHECK(r.time_us >= static_cast<double>(launches.size()) * d.host_op_overhead_us);
  const SimResult native = simulate(d, build_launches(d, w, parse_kernel_spec("v2", {})));
  CHECK(r.time_us > 2 * native.time_us);
}

TEST_CASE("sim model: kernel specs and workload errors") {
  CHECK(parse_kernel_spec("v2:1024", {}).partition_size == 1024);
  CHECK(parse_kernel_spec("prefix:64x32", {}).block_n == 32);
  CHECK(parse_kernel_spec("fallback:256", {}).label() == "fallback-256");
  CHECK_THROWS_WITH_AS(parse_kernel_spec("v3", {}), doctest::Contains("unknown kernel 'v3'"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_kernel_spec("v2:abc", {}), doctest::Contains("not an integer"), pao::Error);
  Workload w = decode({10, 20}, 6, 4);
  CHECK_THROWS_WITH_AS(validate_workload(w), doctest::Contains("not a multiple of num_kv_heads"), pao::Error);
  w = decode({10, -1});
  CHECK_THROWS_WITH_AS(validate_workload(w), doctest::Contains("seq_lens[1] = -1"), pao::Error);
  const Device d = load_device("bi-v100");
  KernelConfig v2 = parse_kernel_spec("v2:500", {});
  CHECK_THROWS_WITH_AS(build_launches(d, decode({100}), v2), doctest::Contains("partition_size = 500"),
                       pao::Error);
}

TEST_CASE("sim model: the workload and kernel defaults of a case of the case model") {
  // A decode case as `pao golden` takes it: lengths drawn from the seed, an fp8 cache.
  const pao::cases::Case d = pao::cases::parse_case(
      R"({"num_heads": 8, "num_kv_heads": 2, "head_size": 128, "dtype": "bf16", "kv_cache_dtype": "fp8",
          "num_seqs": 3, "max_seq_len": 2000, "partition_size": 256, "seed": 7})",
      "case.json");
  const Workload w = workload_of(d);
  CHECK(w.num_seqs == 3);
  CHECK(w.num_heads == 8);
  CHECK(w.num_kv_heads == 2);
  CHECK(w.seq_lens == d.seq_lens);
  CHECK(w.seq_lens.back() == 2000);
  CHECK(w.query_lens.empty());
  CHECK(w.max_seq_len == 2000);
  CHECK(w.dtype == pao::DType::bf16);
  CHECK(w.kv_cache_dtype == pao::DType::fp8_e4m3);
  const KernelConfig k = kernel_defaults_of(d, KernelConfig{});
  CHECK(k.partition_size == 256);
  CHECK(parse_kernel_spec("v2", k).partition_size == 256);
  CHECK(parse_kernel_spec("v2:1024", k).partition_size == 1024);  // a spec's own value wins
  // A prefix case: its new tokens and tiles.
  const pao::cases::Case p = pao::cases::parse_case(
      R"({"kernel": "prefix", "num_heads": 4, "head_size": 64, "dtype": "f16", "seq_lens": [300, 20],
          "query_lens": [100, 20], "block_m": 64, "block_n": 32})",
      "prefix.json");
  const Workload pw = workload_of(p);
  CHECK(pw.query_lens == std::vector<std::int32_t>{100, 20});
  CHECK(pw.query_len(0) == 100);
  const KernelConfig pk = kernel_defaults_of(p, KernelConfig{});
  CHECK(pk.block_m == 64);
  CHECK(pk.block_n == 32);
  CHECK(pk.context_tile == 32);
  CHECK(parse_kernel_spec("prefix", pk).label() == "prefix-64x32");
  // Bad input is the case model's error, naming the field.
  CHECK_THROWS_WITH_AS(pao::cases::parse_case(R"({"num_heads": 8, "seq_len": 100})", "bad.json"),
                       doctest::Contains("unknown field 'seq_len' (did you mean 'seq_lens'?)"), pao::Error);
}

TEST_CASE("the simulator's decode workloads take vLLM's head sizes only") {
  Workload w;
  w.num_seqs = 1;
  w.num_heads = w.num_kv_heads = 8;
  w.seq_lens = {1024};
  for (int hs : {72, 100, 520}) {
    w.head_size = hs;
    CHECK_THROWS_WITH_AS(validate_workload(w), doctest::Contains("not one of vLLM's head sizes"), pao::Error);
  }
  w.head_size = 128;
  CHECK_NOTHROW(validate_workload(w));
}

// The plan: vLLM's grids, partition ranges, shared-memory sizes and its input checks.
#include <doctest/doctest.h>

#include <vector>

#include "pao/core/error.hpp"
#include "pao/plan/decode_plan.hpp"

using namespace pao;

namespace {

DecodeShape shape(std::int32_t seqs, std::int32_t max_seq_len) {
  DecodeShape s;
  s.num_seqs = seqs;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_size = 128;
  s.block_size = 16;
  s.max_seq_len = max_seq_len;
  s.partition_size = 512;
  return s;
}

}  // namespace

TEST_CASE("V1 has one CTA per (head, seq) in grid order") {
  const std::vector<std::int32_t> lens{5, 0, 700};
  const DecodePlan p = plan_decode(KernelVariant::v1, shape(3, 700), lens);
  CHECK(p.grid_x == 4);
  CHECK(p.grid_y == 3);
  CHECK(p.grid_z == 1);
  REQUIRE(p.ctas.size() == 12);
  CHECK(p.ctas[5].seq == 1);
  CHECK(p.ctas[5].head == 1);
  CHECK(p.ctas[4].empty());
  CHECK(p.ctas[8].token_end == 700);
  CHECK(p.reduce_ctas.empty());
  // vLLM: logits of the padded max_seq_len (704 floats) vs (4 warps / 2) * 128 floats.
  CHECK(p.attention_shared_bytes == 704 * 4);
}

TEST_CASE("V2 partitions cover each sequence; those past its end are empty") {
  const std::vector<std::int32_t> lens{1, 512, 513, 0};
  const DecodePlan p = plan_decode(KernelVariant::v2, shape(4, 1500), lens);
  CHECK(p.max_num_partitions == 3);
  REQUIRE(p.ctas.size() == 4u * 4 * 3);
  std::vector<std::int32_t> covered(4, 0);
  for (const auto& c : p.ctas) {
    CHECK(c.token_begin == c.partition * 512);
    if (c.head == 0) covered[static_cast<std::size_t>(c.seq)] += c.num_tokens();
    if (c.seq == 1 && c.partition == 1) CHECK(c.empty());
    if (c.seq == 2 && c.partition == 1) CHECK(c.num_tokens() == 1);
  }
  CHECK(covered == lens);
  REQUIRE(p.reduce_ctas.size() == 16);
  CHECK(p.reduce_ctas[0].num_partitions == 1);
  CHECK(p.reduce_ctas[4 * 2].num_partitions == 2);
  CHECK(p.reduce_ctas[4 * 3].num_partitions == 0);
  CHECK(p.attention_shared_bytes == 512 * 4);
  CHECK(p.reduce_shared_bytes == 2 * 3 * 4);
  // Grid order: head fastest, then seq, then partition.
  CHECK(p.ctas[1].head == 1);
  CHECK(p.ctas[4].seq == 1);
  CHECK(p.ctas[16].partition == 1);
}

TEST_CASE("plan rejects inconsistent shapes with the rule in the message") {
  const std::vector<std::int32_t> lens{100};
  DecodeShape s = shape(1, 100);
  s.num_kv_heads = 3;
  CHECK_THROWS_WITH_AS(plan_decode(KernelVariant::v1, s, lens),
                       doctest::Contains("not a multiple of num_kv_heads"), Error);
  s = shape(1, 100);
  s.partition_size = 500;
  CHECK_THROWS_WITH_AS(plan_decode(KernelVariant::v2, s, lens), doctest::Contains("multiple of block_size"),
                       Error);
  s = shape(1, 50);
  CHECK_THROWS_WITH_AS(plan_decode(KernelVariant::v2, s, lens), doctest::Contains("exceeds max_seq_len"),
                       Error);
  s = shape(2, 100);
  CHECK_THROWS_WITH_AS(plan_decode(KernelVariant::v1, s, lens), doctest::Contains("num_seqs = 2"), Error);
}

// CPU-only checks of the CUDA launchers' host side (cuda/include/pao/cuda/): the grid, threads
// and shared memory of every launch come from the plan, each CTA computes the plan's token range,
// the kernels' compile-time geometry is DecodeGeometry::make's, the dispatcher reaches every
// supported combination and names unsupported values, and vector loads are used only where the
// cache layout allows them. These run everywhere; the kernels themselves need a GPU
// (pao-cuda-check).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/prefix_launch.hpp"
#include "pao/kernels/logits.hpp"

using namespace pao;
using namespace pao::cuda;

namespace {

struct LaunchCase {
  KernelVariant kernel;
  std::int32_t num_heads, num_kv_heads, head_size, block_size, partition_size, max_seq_len;
  DType dtype;
  std::vector<std::int32_t> seq_lens;

  std::string to_string() const {
    std::string s = pao::to_string(kernel) + " heads " + std::to_string(num_heads) + "/" +
                    std::to_string(num_kv_heads) + " hs " + std::to_string(head_size) + " bs " +
                    std::to_string(block_size) + " part " + std::to_string(partition_size) + " max_seq_len " +
                    std::to_string(max_seq_len) + " " + std::string(dtype_name(dtype)) + " lens [";
    for (auto l : seq_lens) s += std::to_string(l) + ",";
    return s + "]";
  }
};

/// Params with fake, aligned device addresses: the host side never dereferences them.
DecodeParams fake_params(const LaunchCase& c) {
  static float storage[64];
  DecodeParams p;
  p.dtype = p.kv_cache_dtype = c.dtype;
  p.num_seqs = static_cast<std::int32_t>(c.seq_lens.size());
  p.num_heads = c.num_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_size = c.head_size;
  p.block_size = c.block_size;
  p.query = p.key_cache = p.value_cache = p.out = p.tmp_out = storage;
  p.block_tables = p.seq_lens = reinterpret_cast<const std::int32_t*>(storage);
  p.max_logits = p.exp_sums = storage;
  p.block_table_stride = 64;
  const std::int64_t x = 16 / static_cast<std::int64_t>(dtype_size(c.dtype));
  const std::int64_t bs = c.block_size, hs = c.head_size, nkv = c.num_kv_heads;
  p.key_layout = {nkv * hs * bs, hs * bs, x, bs * x, 1, static_cast<std::int32_t>(x)};
  p.value_layout = {nkv * hs * bs, hs * bs, 1, bs, 0, 1};
  return p;
}

/// A case's params, its plan and its launch, each step required to succeed.
struct PlannedLaunch {
  DecodeParams params;
  DecodePlan plan;
  DecodeLaunch launch;
};
PlannedLaunch planned_launch(const LaunchCase& c) {
  PlannedLaunch l{fake_params(c), {}, {}};
  REQUIRE(plan_decode_launch(c.kernel, l.params, c.max_seq_len, c.partition_size, c.seq_lens, l.plan).ok());
  const Status s = make_decode_launch(l.params, l.plan, l.launch);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return l;
}

std::vector<LaunchCase> launch_cases() {
  return {
      {KernelVariant::v1, 8, 2, 128, 16, 512, 0, DType::f16, {1, 37, 600, 1100}},
      {KernelVariant::v2, 8, 2, 128, 16, 512, 0, DType::f16, {1, 37, 600, 1100}},
      {KernelVariant::v2, 4, 4, 64, 32, 256, 2000, DType::bf16, {0, 5, 513}},
      {KernelVariant::v2, 4, 1, 80, 8, 64, 0, DType::f32, {100, 33}},
      {KernelVariant::v1, 40, 40, 256, 8, 512, 4096, DType::bf16, {4096, 1, 0}},
      {KernelVariant::v2, 64, 8, 120, 16, 32, 0, DType::f16, {17, 64, 65, 0}},
      {KernelVariant::v2, 2, 1, 192, 32, 1024, 0, DType::f32, {0, 0}},
  };
}

}  // namespace

TEST_CASE("the CUDA launch grid, threads and shared memory are the plan's") {
  for (const auto& c : launch_cases()) {
    INFO(c.to_string());
    const auto [params, plan, launch] = planned_launch(c);
    CHECK(launch.attention.grid.x == static_cast<std::uint32_t>(plan.grid_x));
    CHECK(launch.attention.grid.y == static_cast<std::uint32_t>(plan.grid_y));
    CHECK(launch.attention.grid.z == static_cast<std::uint32_t>(plan.grid_z));
    CHECK(launch.attention.grid.count() == plan.ctas.size());
    CHECK(launch.attention.block.x == 128);
    CHECK(launch.attention.dynamic_shared_bytes == plan.attention_shared_bytes);
    CHECK(launch.max_num_partitions == plan.max_num_partitions);
    if (c.kernel == KernelVariant::v1) {
      CHECK(launch.partition_size == 0);
      CHECK(launch.reduce.grid.count() == 1);  // unused: V1 launches no reduce
    } else {
      CHECK(launch.partition_size == c.partition_size);
      CHECK(launch.reduce.grid.x == static_cast<std::uint32_t>(c.num_heads));
      CHECK(launch.reduce.grid.y == static_cast<std::uint32_t>(c.seq_lens.size()));
      CHECK(launch.reduce.grid.count() == plan.reduce_ctas.size());
      CHECK(launch.reduce.dynamic_shared_bytes == plan.reduce_shared_bytes);
    }
  }
}

TEST_CASE("each CUDA CTA computes the token range the plan gives it") {
  for (const auto& c : launch_cases()) {
    INFO(c.to_string());
    const auto [params, plan, launch] = planned_launch(c);
    // The kernel's CTA (blockIdx.x, .y, .z) is the plan's CTA at the same linear grid index.
    std::size_t i = 0;
    for (std::uint32_t z = 0; z < launch.attention.grid.z; ++z)
      for (std::uint32_t y = 0; y < launch.attention.grid.y; ++y)
        for (std::uint32_t x = 0; x < launch.attention.grid.x; ++x, ++i) {
          const AttentionCta& cta = plan.ctas[i];
          CHECK(cta.head == static_cast<std::int32_t>(x));
          CHECK(cta.seq == static_cast<std::int32_t>(y));
          CHECK(cta.partition == static_cast<std::int32_t>(z));
          // What the kernel computes from its launch (paged_attention_decode.cuh).
          const IndexRange t =
              partition_tokens(c.seq_lens[y], launch.partition_size, static_cast<std::int32_t>(z));
          CHECK(t.empty() == cta.empty());
          if (!cta.empty()) {
            CHECK(t.begin == cta.token_begin);
            CHECK(t.end == cta.token_end);
            CHECK(t.begin % c.block_size == 0);  // the kernel's first block is begin / block_size
          }
          // The logits of a CTA fit its dynamic shared memory.
          CHECK(static_cast<std::size_t>(t.size()) * 4 <= launch.attention.dynamic_shared_bytes);
        }
    for (const ReduceCta& rc : plan.reduce_ctas)
      CHECK(partitions_of_sequence(c.seq_lens[static_cast<std::size_t>(rc.seq)], launch.partition_size) ==
            rc.num_partitions);
  }
}

TEST_CASE("the kernels' geometry is DecodeGeometry::make, usable as a constant expression") {
  // The kernels size their arrays with it (paged_attention_decode.cuh); one CTA of vLLM's.
  static_assert(DecodeGeometry::make(kWarpSize, kThreadsPerCta, 16, 2).num_warps ==
                kThreadsPerCta / kWarpSize);
  // Every instantiated head size is a multiple of the Q·K step, as the kernel's static_assert needs.
  for (std::int32_t hs : kHeadSizes)
    for (std::int32_t bs : kBlockSizes)
      for (std::int32_t eb : {2, 4}) CHECK(hs % DecodeGeometry::make(32, 128, bs, eb).dims_per_step == 0);
}

TEST_CASE("the Q·K loop's K batches cover a lane's vectors, whole up to 16, else at most 128 bytes") {
  // What the kernel's batch loop needs of qk_batch_vectors (pao/kernels/decode_geometry.hpp), for
  // every instantiable geometry and cache: batches of vectors of up to 4 elements outside integer
  // caches (otherwise 0: the unroll of 4); one batch holding them all where a lane has up to 16
  // vectors; beyond, batches of at most 128 bytes of K (at most 8 vectors over an fp8 cache) in
  // the fewest rounds that allows, none of them empty.
  for (const DType activation : kActivationDTypes) {
    std::vector<DType> caches{activation};  // its own dtype, or a cache format
    caches.insert(caches.end(), kQuantisedCacheDTypes.begin(), kQuantisedCacheDTypes.end());
    for (const DType stored : caches)
      for (std::int32_t hs : kHeadSizes)
        for (std::int32_t bs : kBlockSizes) {
          CAPTURE(dtype_name(activation));
          CAPTURE(dtype_name(stored));
          CAPTURE(hs);
          CAPTURE(bs);
          const DecodeGeometry g =
              DecodeGeometry::make(32, 128, bs, static_cast<std::int32_t>(dtype_size(activation)));
          const std::int32_t vectors = hs / g.dims_per_step;
          const std::int32_t batch = pao::qk_batch_vectors(g, hs, qk_cache(stored));
          const std::int32_t rounds = pao::qk_load_rounds(g, hs, qk_cache(stored));
          if (is_integer_cache(stored) || g.vec_size > 4) {
            CHECK(batch == 0);
            CHECK(rounds == (vectors + 3) / 4);
            continue;
          }
          if (vectors <= 16) {
            CHECK(batch == vectors);
            CHECK(rounds == 1);
            continue;
          }
          const auto fits = [&](std::int32_t b) {
            return is_fp8(stored) ? b <= 8
                                  : b * g.vec_size * static_cast<std::int32_t>(dtype_size(stored)) <= 128;
          };
          CHECK(fits(batch));
          CHECK(rounds * batch >= vectors);       // the rounds cover every vector
          CHECK((rounds - 1) * batch < vectors);  // and none is empty
          if (rounds > 1) CHECK_FALSE(fits((vectors + rounds - 2) / (rounds - 1)));  // no fewer fit
        }
  }
  // Head size 256 under f16 at blocks of 16 (3 of the H200 shapes): 32 vectors of 4 elements (8
  // bytes) in 2 batches of 16; at blocks of 8, 32 vectors of 4 bytes in one; over an fp8 cache 4
  // of 8. f32 at head size 80, blocks of 16: 20 vectors of 8 bytes in 2 of 10; at blocks of 32,
  // head size 128: 32 vectors of 16 bytes in 4 of 8.
  CHECK(pao::qk_batch_vectors(DecodeGeometry::make(32, 128, 16, 2), 256, qk_cache(DType::f16)) == 16);
  CHECK(pao::qk_batch_vectors(DecodeGeometry::make(32, 128, 8, 2), 256, qk_cache(DType::bf16)) == 32);
  CHECK(pao::qk_batch_vectors(DecodeGeometry::make(32, 128, 16, 2), 256, qk_cache(DType::fp8_e4m3)) == 8);
  CHECK(pao::qk_batch_vectors(DecodeGeometry::make(32, 128, 16, 4), 80, qk_cache(DType::f32)) == 10);
  CHECK(pao::qk_batch_vectors(DecodeGeometry::make(32, 128, 32, 4), 128, qk_cache(DType::f32)) == 8);
  CHECK(pao::qk_load_rounds(DecodeGeometry::make(32, 128, 16, 2), 256, qk_cache(DType::f16)) == 2);
}

TEST_CASE("the dispatcher reaches every supported combination once, with its own values") {
  std::set<std::tuple<int, int, int, int>> seen;
  // A full build (the tests' build) holds every activation dtype with its own cache and each fp8.
  static_assert(PAO_CUDA_SLIM || std::size(kDTypePairs) == 3 * 5);  // own, 2 fp8, u8, i8
  for (const DTypePair& pair : kDTypePairs)
    for (std::int32_t hs : kHeadSizes)
      for (std::int32_t bs : kBlockSizes) {
        const DType q = pair.activation, c = pair.cache;
        const Status s = dispatch_dtypes(q, c, [&]<DType Q, DType C>() {
          return dispatch_head_and_block(hs, bs, [&]<std::int32_t HS, std::int32_t BS>() {
            CHECK(Q == q);
            CHECK(C == c);
            CHECK(HS == hs);
            CHECK(BS == bs);
            seen.insert({static_cast<int>(Q), static_cast<int>(C), HS, BS});
            return Status{};
          });
        });
        CHECK_MESSAGE(s.ok(), s.message());
      }
  CHECK(seen.size() == std::size(kDTypePairs) * std::size(kHeadSizes) * std::size(kBlockSizes));
  int reduce = 0;
  for (DType q : kActivationDTypes)
    CHECK(dispatch_activation(q, [&]<DType Q>() {
            CHECK(Q == q);
            ++reduce;
            return Status{};
          }).ok());
  CHECK(reduce == 3);
}

TEST_CASE("unsupported values fail with their name and value") {
  const auto never = []<auto...>() {
    FAIL("an unsupported value reached a kernel");
    return Status{};
  };
  const auto message = [](const Status& s) { return s.message(); };
  CHECK(message(dispatch_head_and_block(40, 16, never)) ==
        "head_size = 40: not supported by the CUDA kernels (supported: 32, 64, 80, 96, 112, 120, 128, 192, "
        "256)");
  CHECK(message(dispatch_head_and_block(128, 64, never)) ==
        "block_size = 64: not supported by the CUDA kernels (supported: 8, 16, 32)");
  CHECK(message(dispatch_dtypes(DType::f64, DType::f64, never)) ==
        "dtype = f64: not supported by the CUDA kernels (supported: f32, f16, bf16)");
  CHECK(message(dispatch_dtypes(DType::f32, DType::f16, never)) ==
        "kv_cache_dtype = f16: must equal dtype (f32) or be one of fp8_e4m3, fp8_e5m2, u8, i8");
  CHECK(message(dispatch_activation(DType::u8, never)).find("dtype = u8") == 0);
}

TEST_CASE("make_decode_launch rejects what the kernels cannot run, naming it") {
  const LaunchCase c{KernelVariant::v2, 8, 2, 128, 16, 512, 0, DType::f16, {1, 700}};
  const DecodeParams good = fake_params(c);
  DecodePlan plan;
  REQUIRE(plan_decode_launch(c.kernel, good, 0, 512, c.seq_lens, plan).ok());
  const auto error = [&](DecodeParams p) {
    DecodeLaunch launch;
    return make_decode_launch(p, plan, launch).message();
  };
  CHECK(error(good).empty());
  {
    DecodeParams p = good;
    p.head_size = 64;
    CHECK(error(p) == "head_size = 64 but the plan was made for head_size = 128");
  }
  {
    DecodeParams p = good;
    p.head_size = 100;
    CHECK(error(p).find("head_size = 100: not supported") == 0);
  }
  {
    DecodeParams p = good;
    p.num_kv_heads = 3;
    CHECK(error(p) == "num_heads = 8 is not a multiple of num_kv_heads = 3");
  }
  {
    DecodeParams p = good;
    p.tmp_out = nullptr;
    CHECK(error(p) == "tmp_out: null device pointer (V2)");
  }
  {
    DecodeParams p = good;
    p.key_cache = nullptr;
    CHECK(error(p) == "key_cache: null device pointer");
  }
  {
    DecodeParams p = good;
    p.soft_cap = -1;
    CHECK(error(p) == "soft_cap = -1: must be >= 0 (0 = off)");
  }
  {
    DecodeParams p = good;
    p.kv_cache_dtype = DType::fp8_e4m3;
    p.k_scale = 0;
    CHECK(error(p) == "k_scale = 0: an fp8 scale must be finite and positive");
    p.k_head_scales = p.max_logits;  // per-head scales replace the per-tensor one
    CHECK(error(p).empty());
  }
  {
    DecodePlan bad;
    DecodeParams p = good;
    CHECK(!plan_decode_launch(KernelVariant::v2, p, 0, 24, c.seq_lens, bad).ok());  // 24 % 16 != 0
    const Status s = plan_decode_launch(KernelVariant::v2, p, 100, 512, c.seq_lens, bad);
    CHECK(s.message().find("seq_lens[1] = 700 exceeds max_seq_len = 100") == 0);
  }
  {
    const LaunchCase many{
        KernelVariant::v2, 1, 1, 64, 16, 16, 0, DType::f16, std::vector<std::int32_t>(70000, 1)};
    DecodePlan big;
    REQUIRE(plan_decode_launch(many.kernel, fake_params(many), 0, 16, many.seq_lens, big).ok());
    DecodeLaunch launch;
    CHECK(make_decode_launch(fake_params(many), big, launch).message() ==
          "num_seqs = 70000: more than the 65535 CTAs of grid y");
  }
}

TEST_CASE("vector loads are used only where the cache layout allows them") {
  alignas(64) static std::uint16_t cache[64];
  const std::int64_t bs = 16, hs = 128, nkv = 2;
  auto contiguous = [&](KVLayout layout, CacheTensor t, std::int64_t head_size) {
    return contiguous_cache_layout(layout, t, cache_shape(layout, t, 4, nkv, head_size, bs, DType::f16));
  };
  // vLLM f16 key [nb, nkv, hs/8, bs, 8]: 8 dims contiguous within a chunk.
  const PagedCacheLayout key = contiguous(KVLayout::vllm, CacheTensor::key, hs);
  REQUIRE(key.x == 8);
  CHECK(dims_vectorizable(key, 4, cache, 2));
  CHECK(dims_vectorizable(key, 8, cache, 2));
  CHECK(!dims_vectorizable(key, 16, cache, 2));     // crosses a chunk of x = 8
  CHECK(!dims_vectorizable(key, 4, cache + 1, 2));  // misaligned base
  CHECK(!tokens_vectorizable(key, 8, cache, 2));
  // vLLM value [nb, nkv, hs, bs]: tokens contiguous.
  const PagedCacheLayout value = contiguous(KVLayout::vllm, CacheTensor::value, hs);
  CHECK(tokens_vectorizable(value, 8, cache, 2));
  CHECK(!tokens_vectorizable(value, 8, cache + 4, 2));
  CHECK(!dims_vectorizable(value, 2, cache, 2));
  // NHD [nb, bs, nkv, hs]: dims contiguous, tokens strided.
  const PagedCacheLayout nhd = contiguous(KVLayout::nhd, CacheTensor::key, hs);
  CHECK(dims_vectorizable(nhd, 8, cache, 2));
  CHECK(!tokens_vectorizable(nhd, 8, cache, 2));
  // A head size that breaks the alignment of later heads.
  const PagedCacheLayout odd = contiguous(KVLayout::nhd, CacheTensor::key, 36);
  CHECK(dims_vectorizable(odd, 4, cache, 2));
  CHECK(!dims_vectorizable(odd, 8, cache, 2));
  CHECK(dims_vectorizable(odd, 1, cache + 1, 2));  // one element is always fine
}

TEST_CASE("the prefix launch runs the plan: grid, CTA table and tiles") {
  static float storage[64];
  PrefixParams p;
  p.dtype = p.kv_cache_dtype = DType::bf16;
  p.num_heads = 8, p.num_kv_heads = 2, p.head_size = 96, p.block_size = 10;
  const std::vector<std::int32_t> query_lens{150, 90, 1, 0}, context{0, 300, 77, 40};
  std::vector<std::int32_t> seq_lens;
  for (std::size_t i = 0; i < query_lens.size(); ++i) seq_lens.push_back(context[i] + query_lens[i]);
  p.num_seqs = 4;
  p.num_tokens = 241;
  p.query = p.key = p.value = p.key_cache = p.value_cache = p.out = storage;
  p.block_tables = reinterpret_cast<const std::int32_t*>(storage);
  PrefixPlan plan;
  REQUIRE(plan_prefix_launch(p, seq_lens, query_lens, 64, 32, 32, 0, plan).ok());
  PrefixLaunch launch;
  const Status s = make_prefix_launch(p, plan, launch);
  REQUIRE_MESSAGE(s.ok(), s.message());
  CHECK(launch.kernel.grid.x == 4);
  CHECK(launch.kernel.grid.y == 8);
  CHECK(launch.kernel.grid.z == 3);  // ceil(150 / 64)
  CHECK(launch.kernel.block.x == static_cast<std::uint32_t>(kPrefixThreads));
  CHECK(launch.max_tile_width == 32);
  CHECK(launch.kernel.dynamic_shared_bytes == prefix_shared_bytes(96, 32));
  REQUIRE(launch.ctas.size() == plan.ctas.size());
  REQUIRE(launch.tiles.size() == plan.tiles.size());
  // The kernel reads ctas[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x].
  for (std::uint32_t z = 0; z < launch.kernel.grid.z; ++z)
    for (std::uint32_t y = 0; y < launch.kernel.grid.y; ++y)
      for (std::uint32_t x = 0; x < launch.kernel.grid.x; ++x) {
        const PrefixDeviceCta& d = launch.ctas[(z * launch.kernel.grid.y + y) * launch.kernel.grid.x + x];
        const PrefixCta& c = plan.cta_at(static_cast<std::int32_t>(x), static_cast<std::int32_t>(y),
                                         static_cast<std::int32_t>(z));
        CHECK(std::make_tuple(d.query_begin, d.query_end, d.token_offset, d.ctx_len, d.first_tile,
                              d.num_tiles) == std::make_tuple(c.query_begin, c.query_end, c.token_offset,
                                                              c.ctx_len, c.first_tile, c.num_tiles()));
      }
  for (std::size_t i = 0; i < plan.tiles.size(); ++i) {
    const PrefixTile& t = plan.tiles[i];
    CHECK(launch.tiles[i].kind == (t.kind == PrefixTileKind::context ? 0 : 1));
    CHECK(launch.tiles[i].key_begin == t.key_begin);
    CHECK(launch.tiles[i].num_keys == t.num_keys);
    CHECK(t.num_keys <= launch.max_tile_width);  // fits the kernel's K/V buffer
  }

  PrefixParams bad = p;
  bad.num_tokens = 240;
  CHECK(make_prefix_launch(bad, plan, launch).message() ==
        "num_tokens = 240 but the plan's query_lens add up to 241");
  bad = p;
  bad.head_size = 100;
  CHECK(make_prefix_launch(bad, plan, launch).message().find("head_size = 100: not supported") == 0);
  bad = p;
  bad.key = nullptr;
  CHECK(make_prefix_launch(bad, plan, launch).message() == "key: null device pointer");
  CHECK(!plan_prefix_launch(p, seq_lens, query_lens, 64, 32, 32, 100, plan).ok());  // 150 > max_query_len
}

TEST_CASE("prefix_tile_visible agrees with prefix_visible over every pair") {
  for (std::int32_t window : {0, 1, 3, 7})
    for (std::int32_t q_lo = 0; q_lo < 12; ++q_lo)
      for (std::int32_t q_hi = q_lo; q_hi < 12; ++q_hi)
        for (std::int32_t k_lo = 0; k_lo < 12; ++k_lo)
          for (std::int32_t k_hi = k_lo; k_hi < 12; ++k_hi) {
            bool any = false;
            for (std::int32_t q = q_lo; q <= q_hi; ++q)
              for (std::int32_t k = k_lo; k <= k_hi; ++k) any = any || prefix_visible(q, k, window);
            CHECK(prefix_tile_visible(q_lo, q_hi, k_lo, k_hi, window) == any);
          }
}

// The CUDA kernel sources (cuda/kernels/paged_attention_decode.cuh, cuda/kernels/prefix_attention.cuh) run on
// the CPU, thread by thread, in an emulation of the CUDA execution model (cuda/emulation/): fibers for
// threads, barriers for __syncthreads and warp shuffles, pao's codecs for the f16 / bf16
// conversions. Their outputs must equal the oracle's kernel precision bit for bit, as on a GPU.
// This checks the kernels' indexing, reduction trees and rounding points without a GPU; nvcc's
// code generation and the hardware conversions are pao-cuda-check's job on a real GPU.
// The launches go through the real host side: plan, make_*_launch, the dispatcher.
// clang-format off
#include "emulation/cuda_emulation.hpp"  // first: it defines the CUDA keywords for the kernel sources
#include "kernels/paged_attention_decode.cuh"
#include "kernels/prefix_attention.cuh"
// clang-format on

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "check/case_params.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/dispatch.hpp"
#include "pao/cuda/prefix_launch.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "support/compare.hpp"
#include "support/decode_cases.hpp"
#include "support/tuning.hpp"

using namespace pao;
using namespace pao::cuda;

namespace {

/// `bytes` of host memory between two 256-byte guard zones, pre-filled with NaN bytes (0xFF), as
/// pao-cuda-check allocates device outputs.
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuard = 256;
  explicit GuardedBuffer(std::size_t bytes) : bytes_(bytes), storage_(bytes + 2 * kGuard + 64, 0xA5) {
    std::fill_n(static_cast<unsigned char*>(data()), bytes_, 0xFF);
  }
  void* data() { return base() + kGuard; }
  bool guards_intact() {
    for (std::size_t i = 0; i < kGuard; ++i)
      if (base()[i] != 0xA5 || base()[kGuard + bytes_ + i] != 0xA5) return false;
    return true;
  }
  Tensor to_tensor(DType dtype, Shape shape) {
    Tensor t(dtype, std::move(shape));
    REQUIRE(t.nbytes() == bytes_);
    if (bytes_) std::memcpy(t.bytes(), data(), bytes_);
    return t;
  }

 private:
  unsigned char* base() {  // 64-byte aligned, like a device allocation
    const auto a = reinterpret_cast<std::uintptr_t>(storage_.data());
    return storage_.data() + ((64 - a % 64) % 64);
  }
  std::size_t bytes_;
  std::vector<unsigned char> storage_;
};

struct EmulatedDecode {
  Tensor out, tmp_out, max_logits, exp_sums;
  bool guards_intact = true;
};

/// V1 or V2 (+ reduce) of `p` (host pointers) through plan, launch checks, dispatcher and emulation.
EmulatedDecode emulate_decode(KernelVariant kernel, DecodeParams p, std::int32_t max_seq_len,
                              std::int32_t partition_size, const std::vector<std::int32_t>& seq_lens) {
  DecodePlan plan;
  const Status planned = plan_decode_launch(kernel, p, max_seq_len, partition_size, seq_lens, plan);
  REQUIRE_MESSAGE(planned.ok(), planned.message());
  const std::int64_t S = p.num_seqs, H = p.num_heads, D = p.head_size, P = plan.max_num_partitions;
  const std::size_t es = dtype_size(p.dtype);
  GuardedBuffer out(static_cast<std::size_t>(S * H * D) * es),
      tmp(static_cast<std::size_t>(S * H * P * D) * es), max_logits(static_cast<std::size_t>(S * H * P) * 4),
      exp_sums(static_cast<std::size_t>(S * H * P) * 4);
  const bool v2 = kernel == KernelVariant::v2;
  p.out = out.data();
  if (v2) {
    p.tmp_out = tmp.data();
    p.max_logits = static_cast<float*>(max_logits.data());
    p.exp_sums = static_cast<float*>(exp_sums.data());
  }
  DecodeLaunch launch;
  const Status checked = make_decode_launch(p, plan, launch);
  REQUIRE_MESSAGE(checked.ok(), checked.message());
  const cuda::detail::DecodeKernelArgs args = cuda::detail::make_decode_kernel_args(p, launch);
  const auto dims = [](const LaunchDims& d) { return emulation::Dim3{d.x, d.y, d.z}; };
  if (launch.attention.grid.count()) {
    const Status s = dispatch_dtypes(p.dtype, p.kv_cache_dtype, [&]<DType Q, DType C>() {
      return dispatch_head_and_block(p.head_size, p.block_size, [&]<std::int32_t HS, std::int32_t BS>() {
        emulation::launch(dims(launch.attention.grid), dims(launch.attention.block),
                          launch.attention.dynamic_shared_bytes,
                          [&] { cuda::detail::decode_attention_kernel<HS, BS, Q, C>(args); });
        return Status{};
      });
    });
    REQUIRE_MESSAGE(s.ok(), s.message());
  }
  if (v2 && launch.reduce.grid.count()) {
    const Status s = dispatch_activation(p.dtype, [&]<DType Q>() {
      emulation::launch(dims(launch.reduce.grid), dims(launch.reduce.block),
                        launch.reduce.dynamic_shared_bytes,
                        [&] { cuda::detail::decode_reduce_kernel<Q>(args); });
      return Status{};
    });
    REQUIRE_MESSAGE(s.ok(), s.message());
  }
  EmulatedDecode e;
  e.out = out.to_tensor(p.dtype, {S, H, D});
  e.guards_intact = out.guards_intact();
  if (v2) {
    e.tmp_out = tmp.to_tensor(p.dtype, {S, H, P, D});
    e.max_logits = max_logits.to_tensor(DType::f32, {S, H, P});
    e.exp_sums = exp_sums.to_tensor(DType::f32, {S, H, P});
    e.guards_intact =
        e.guards_intact && tmp.guards_intact() && max_logits.guards_intact() && exp_sums.guards_intact();
  }
  return e;
}

Tensor emulate_prefix(PrefixParams p, const cases::Case& s, const std::vector<std::int32_t>& seq_lens,
                      bool& guards_intact) {
  PrefixPlan plan;
  const Status planned = plan_prefix_launch(p, seq_lens, s.query_lens, s.block_m, s.block_n, s.context_tile,
                                            s.max_query_len, plan);
  REQUIRE_MESSAGE(planned.ok(), planned.message());
  GuardedBuffer out(static_cast<std::size_t>(p.num_tokens) * p.num_heads * p.head_size * dtype_size(p.dtype));
  p.out = out.data();
  PrefixLaunch launch;
  const Status checked = make_prefix_launch(p, plan, launch);
  REQUIRE_MESSAGE(checked.ok(), checked.message());
  cuda::detail::PrefixKernelArgs args;
  args.p = p;
  args.ctas = launch.ctas.data();
  args.tiles = launch.tiles.data();
  args.max_tile_width = launch.max_tile_width;
  if (launch.kernel.grid.count()) {
    const LaunchDims& g = launch.kernel.grid;
    const Status st = dispatch_dtypes(p.dtype, p.kv_cache_dtype, [&]<DType Q, DType C>() {
      return dispatch_head_size(p.head_size, [&]<std::int32_t HS>() {
        emulation::launch({g.x, g.y, g.z}, {launch.kernel.block.x, 1, 1}, launch.kernel.dynamic_shared_bytes,
                          [&] { cuda::detail::prefix_attention_kernel<HS, Q, C>(args); });
        return Status{};
      });
    });
    REQUIRE_MESSAGE(st.ok(), st.message());
  }
  guards_intact = out.guards_intact();
  return out.to_tensor(p.dtype, {p.num_tokens, p.num_heads, p.head_size});
}

void expect_bitwise(const std::string& id, const std::string& name, const Tensor& oracle,
                    const Tensor& emulated) {
  CHECK_MESSAGE(test::bitwise_equal(oracle, emulated),
                id << " " << name << ": " << test::first_bitwise_difference(oracle, emulated));
}

/// Emulates V1 and V2 of a decode case and compares every tensor with the oracle's kernel precision.
/// `misalign`: copy the caches one element off their alignment, so that every K and V load takes
/// the element-by-element path.
void check_decode_case(const cases::Case& cc, bool misalign = false) {
  INFO(cases::case_to_json(cc));
  const cases::DecodeCase c = cases::make_decode_case(cc);
  const DecodeArgs args = c.args();
  DecodeParams p = check::case_decode_params(c, args.options);
  std::vector<unsigned char> k_copy, v_copy;
  if (misalign) {
    const std::size_t es = dtype_size(c.key_cache.dtype());
    k_copy.assign(c.key_cache.nbytes() + 64, 0);
    v_copy.assign(c.value_cache.nbytes() + 64, 0);
    const auto shift = [&](std::vector<unsigned char>& buf) {
      const auto a = reinterpret_cast<std::uintptr_t>(buf.data());
      return buf.data() + ((64 - a % 64) % 64) + es;  // 64-byte aligned plus one element
    };
    unsigned char* k = shift(k_copy);
    unsigned char* v = shift(v_copy);
    std::memcpy(k, c.key_cache.bytes(), c.key_cache.nbytes());
    std::memcpy(v, c.value_cache.bytes(), c.value_cache.nbytes());
    p.key_cache = k;
    p.value_cache = v;
    DecodePlan plan;
    REQUIRE(plan_decode_launch(KernelVariant::v1, p, cc.max_seq_len, cc.partition_size,
                               check::case_seq_lens(c.seq_lens), plan)
                .ok());
    DecodeLaunch launch;
    p.out = k;  // any non-null address: only the checks run
    REQUIRE(make_decode_launch(p, plan, launch).ok());
    p.out = nullptr;
    const std::int32_t eb = static_cast<std::int32_t>(dtype_size(p.dtype));
    const DecodeGeometry g = DecodeGeometry::make(kWarpSize, kThreadsPerCta, p.block_size, eb);
    CHECK((g.vec_size == 1 || !launch.key_vector_loads));
    CHECK(!launch.value_vector_loads);
  }
  const auto lens = check::case_seq_lens(c.seq_lens);

  // The CUDA kernels' GPU (warp 32, 128 threads: vLLM's tuning) with the case's partitions.
  const KernelTuning cuda_tuning = test::partitioned(cc.partition_size);
  const DecodeOutputs v1 = paged_attention_v1(args, Precision::kernel, cuda_tuning);
  const EmulatedDecode e1 = emulate_decode(KernelVariant::v1, p, cc.max_seq_len, cc.partition_size, lens);
  expect_bitwise(cc.id, "v1.out", v1.out, e1.out);
  CHECK(e1.guards_intact);

  const DecodeOutputs v2 = paged_attention_v2(args, Precision::kernel, cuda_tuning);
  const EmulatedDecode e2 = emulate_decode(KernelVariant::v2, p, cc.max_seq_len, cc.partition_size, lens);
  expect_bitwise(cc.id, "v2.tmp_out", v2.tmp_out, e2.tmp_out);
  expect_bitwise(cc.id, "v2.max_logits", v2.max_logits, e2.max_logits);
  expect_bitwise(cc.id, "v2.exp_sums", v2.exp_sums, e2.exp_sums);
  expect_bitwise(cc.id, "v2.out", v2.out, e2.out);
  CHECK(e2.guards_intact);
}

void check_prefix_case(const cases::Case& cc) {
  INFO(cases::case_to_json(cc));
  const cases::PrefixCase c = cases::make_prefix_case(cc);
  const PrefixArgs args = c.args();
  const PrefixOutputs oracle = prefix_attention(args, Precision::kernel, cc);
  bool guards = false;
  const Tensor out = emulate_prefix(check::case_prefix_params(c, args.options), cc,
                                    check::case_seq_lens(c.seq_lens), guards);
  expect_bitwise(cc.id, "prefix.out", oracle.out, out);
  CHECK(guards);
}

/// The cases of data/cases/<name>.json, as `pao golden` and pao-cuda-check expand them.
std::vector<cases::Case> suite(const std::string& name, bool full = false) {
  return cases::expand_suite(data_dir() / "cases" / (name + ".json"), full);
}

void check_suite(const std::string& name, bool full = false) {
  for (const auto& cc : suite(name, full)) {
    if (cc.kernel == cases::CaseKernel::prefix)
      check_prefix_case(cc);
    else
      check_decode_case(cc);
  }
}

}  // namespace

TEST_CASE("the CUDA kernels, emulated thread by thread, equal the oracle on the edges suite") {
  check_suite("edges");
}

TEST_CASE("the CUDA kernels, emulated thread by thread, equal the oracle on the smoke suite") {
  check_suite("smoke");
}

TEST_CASE("the CUDA kernels, emulated thread by thread, equal the oracle on the integer suite") {
  // u8 / i8 / u4 caches with scales and zero points by token, by channel and in groups, f16 params,
  // both roundings, OpenVINO's quantiser; decode V1 / V2 and prefix.
  check_suite("integer");
}

TEST_CASE("emulated CUDA decode: f32 over fp8 with a scale of 4e-4 rounds through half as vLLM does") {
  // The oracle's kernel precision follows vLLM's half2 path (fp8_dequant_through_half); so must
  // the CUDA kernel, bit for bit: K with vectors of 1 (block 8), 2 (16) and 4 (32), V always.
  for (const std::int32_t bs : {8, 16, 32})
    for (const auto kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      check_decode_case(pao::test::f32_over_fp8_case(bs, kv, {1, 37, 130}));
    }
}

TEST_CASE("emulated CUDA prefix: new tokens read back from an fp8 cache, HND and NHD caches") {
  int n = 0;
  for (cases::Case cc : suite("smoke")) {
    if (cc.kernel != cases::CaseKernel::prefix) continue;
    for (KVLayout layout : kAllKVLayouts) {
      cc.kv_layout = layout;
      if (layout == KVLayout::vllm && cc.head_size % vllm_key_x(cc.cache_storage_dtype()) != 0) continue;
      cc.new_kv_source = cc.cache_new_tokens ? NewKVSource::cache : NewKVSource::input;
      check_prefix_case(cc);
      n += cc.new_kv_source == NewKVSource::cache && is_fp8(cc.cache_storage_dtype());
    }
  }
  CHECK(n > 0);  // some fp8 case read its new tokens from the cache
}

TEST_CASE("emulated CUDA decode: element-by-element cache loads give the same bits as vector loads") {
  int misaligned = 0;
  for (const auto& cc : suite("edges"))
    if (cc.kernel == cases::CaseKernel::decode && cc.max_seq_len > 0) {
      check_decode_case(cc, true);
      ++misaligned;
    }
  CHECK(misaligned >= 8);
}

TEST_CASE("emulated CUDA decode: warp-sized edge cases") {
  // Every block size with each dtype, sequences ending at and just past block and partition edges,
  // GQA with 4 queries per KV head, ALiBi and a window.
  int seed = 900;
  for (std::int32_t bs : kBlockSizes)
    for (DType dt : kActivationDTypes) {
      cases::Case s;
      s.id = "edges-bs" + std::to_string(bs) + "-" + std::string(dtype_name(dt));
      s.num_heads = 8, s.num_kv_heads = 2, s.head_size = 64, s.block_size = bs;
      s.dtype = dt;
      s.seq_lens = {bs, bs + 1, 4 * bs - 1, 4 * bs, 4 * bs + 1, 1};
      s.num_seqs = static_cast<std::int32_t>(s.seq_lens.size());
      s.partition_size = 2 * bs;
      s.alibi = bs != 16;
      s.sliding_window = bs == 32 ? 40 : 0;
      s.seed = static_cast<std::uint64_t>(seed++);
      check_decode_case(s);
    }
}

// Minutes on 2 cores: ctest runs it only by its label (ctest -L slow; tests/CMakeLists.txt).
TEST_CASE("[slow] the CUDA kernels, emulated, equal the oracle on every kernel instantiation") {
  check_suite("instances", true);
}

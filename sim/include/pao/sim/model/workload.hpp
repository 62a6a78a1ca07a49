// A workload to time: what the simulator needs of a case (pao/cases/case.hpp) — the shapes and
// sequence lengths of one batch — and which kernel (with which tuning parameters) runs it. The
// same struct feeds `pao sim run`, sweeps, advice and calibration; a case (a case JSON, a golden)
// becomes one with workload_of, its tuning parameters with kernel_defaults_of.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/dtype.hpp"
#include "pao/plan/kernel_tuning.hpp"
#include "pao/plan/kernel_variant.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::sim {

/// Built in code, a Workload starts as one sequence of 32 / 32 heads of 128, blocks of 16.
struct Workload : LaunchShape {
  Workload() : LaunchShape{1, 32, 32, 128, 16} {}
  std::vector<std::int32_t> seq_lens;    // [num_seqs]: context + new tokens of each sequence
  std::vector<std::int32_t> query_lens;  // [num_seqs]: new tokens (prefix, fallback); empty = 1 each
  std::int32_t max_seq_len = 0;          // bounds V2's partitions and V1's shared memory; 0 = max
  DType dtype = DType::f16;              // query, key, value, out
  DType kv_cache_dtype = DType::f16;     // the paged cache: as dtype, an fp8 flavour, u8 or i8
  KVQuant kv_quant;                      // u8 / i8: the scales and zero points read beside the codes

  std::int32_t effective_max_seq_len() const;
  std::int32_t query_len(std::size_t seq) const { return query_lens.empty() ? 1 : query_lens[seq]; }
  /// "seqs=8 heads=32/8 hs=128 bs=16 len=4096 f16/fp8_e4m3" (lengths summarised when ragged).
  std::string to_string() const;
};

/// Whose compiled kernel is timed. vllm: vLLM's kernels (csrc/attention, the published rows of
/// data/measurements/published-vllm.csv); pao-cuda: pao's own CUDA kernels (cuda/kernels, what
/// tools/gpgpusim runs), the same CTAs with their own instruction counts (instruction_model.hpp);
/// pao-cuda-pre38: pao's CUDA decode kernels as they were before issue #38's cuts (before commit
/// 8dd60bb: every address through PagedCacheLayout::offset, 3.4-6.9x vLLM's instructions), which
/// the H200 rows and the first GPGPU-Sim rows of pao's kernels timed.
enum class KernelImplementation : std::uint8_t { vllm, pao_cuda, pao_cuda_pre38 };

/// "vllm", "pao-cuda", "pao-cuda-pre38".
std::string_view to_string(KernelImplementation implementation);
/// pao's own CUDA kernels, of either generation.
bool is_pao_cuda(KernelImplementation implementation);
/// Parses a name of to_string's; throws pao::Error naming `what` and the choices.
KernelImplementation parse_kernel_implementation(std::string_view text, std::string_view what);

/// A kernel to time and its tuning (pao/plan/kernel_tuning.hpp: partition_size for V2,
/// threads_per_cta, the prefix tiles; the warp size is the device's, not the tuning's).
struct KernelConfig : KernelTuning {
  KernelVariant kind = KernelVariant::v1;
  std::int32_t registers_per_thread = 0;  // 0: the model's default for the kernel (an assumption)
  std::int32_t prefix_warps = 4;          // prefix: warps per CTA
  std::int32_t fallback_tile = 512;       // fallback: tokens per host-loop K tile
  KernelImplementation implementation = KernelImplementation::vllm;

  /// "v1", "v2-512", "prefix-128x128", "fallback-512"; "@pao-cuda" (the implementation) after it
  /// for any but vLLM's.
  std::string label() const;
};

/// Bytes read per K / V element of the cache, averaged over K and V: the element, plus an integer
/// cache's scales and zero points (pao/numerics/kv_quant.hpp).
double kv_bytes_per_element(const Workload& w);

/// Checks shapes and lengths; throws pao::Error naming the field and the rule.
void validate_workload(const Workload& w);

/// Parses "v1", "v2", "v2:1024", "prefix", "prefix:64x32", "fallback", "fallback:256", each
/// optionally followed by "@" and an implementation ("@pao-cuda"); fields a spec does not set
/// come from `defaults`.
KernelConfig parse_kernel_spec(std::string_view spec, const KernelConfig& defaults);

/// Parses "4096" or "100,2000,4096" (`what` names the flag in errors).
std::vector<std::int32_t> parse_int_list(std::string_view text, std::string_view what);
/// The workload of a case: its shapes, lengths (prefix: query_lens too), dtype and cache dtype.
Workload workload_of(const cases::Case& c);
/// `base` with the case's tuning parameters: partition size, threads per CTA, prefix tiles.
KernelConfig kernel_defaults_of(const cases::Case& c, KernelConfig base);

}  // namespace pao::sim

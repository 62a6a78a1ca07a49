// The benchmark cases of pao-bench: a case of pao's case model (data/cases/bench.json, or any case
// JSON), its tensors, its work (bytes of K/V attended, FLOPs) and a function that runs it in either
// precision (decode: V2 with its reduce; prefix: the K-tiled prefix kernel).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pao/cases/case.hpp"

namespace pao::bench {

struct BenchCase {
  std::string name;
  double kv_bytes = 0;  // K and V bytes the kernels must read (each once per KV head)
  double flops = 0;     // 2 per multiply-add of Q·K and P·V, every query head
  /// fp32 -> f16 roundings that kernel precision performs where the GPU computes in f16 (0: none
  /// counted): vLLM's f16 P·V rounds each product and each pairwise sum (decode, f16 only).
  double kernel_f16_roundings = 0;
  std::function<void(bool exact)> run;
  std::shared_ptr<void> inputs;  // keeps the case's tensors alive
};

/// Throws pao::Error for a case pao-bench cannot time: a kind without attention (reshape_and_cache,
/// write_and_attend), or tensors above the memory limit (pao/golden/tensors.hpp).
void require_benchable(const cases::Case& c);

/// Builds the case's tensors. Throws pao::Error for a case the kernels reject.
BenchCase make_bench_case(const cases::Case& c);

}  // namespace pao::bench

// The benchmark cases of pao-bench: their inputs, their work (bytes of K/V attended, FLOPs) and
// a function that runs them in either precision.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace pao::bench {

struct BenchCase {
  std::string name;
  double kv_bytes = 0;  // K and V bytes the kernels must read (each once per KV head)
  double flops = 0;     // 2 per multiply-add of Q·K and P·V, every query head
  /// fp32 -> f16 roundings that kernel precision performs where the GPU computes in f16 (0: none
  /// counted): vLLM's f16 P·V rounds each product and each pairwise sum.
  double kernel_f16_roundings = 0;
  std::function<void(bool exact)> run;
  std::shared_ptr<void> inputs;  // keeps the case's tensors alive
};

/// "decode" or "prefill"; throws pao::Error for another name.
BenchCase make_bench_case(const std::string& name);

}  // namespace pao::bench

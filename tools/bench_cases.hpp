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
  std::function<void(bool exact)> run;
  std::shared_ptr<void> inputs;  // keeps the case's tensors alive
};

/// "decode" or "prefill"; throws pao::Error for another name.
BenchCase make_bench_case(const std::string& name);

}  // namespace pao::bench

// The CPU side of pao-cuda-check's judgement of a case, apart from the GPU side so that the harness
// computes it for many cases at once (check/ordered_parallel.hpp) and the CPU tests cover it: the
// case as pao's CUDA kernels run it, the variants that have a CUDA kernel, and the golden made in
// memory (the oracle's outputs at the kernel and exact precisions).
#pragma once

#include <string>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/plan/kernel_variant.hpp"

namespace pao::cuda::check {

struct CaseOracle {
  cases::Case c;                        // as pao's CUDA kernels run it (as_cuda_runs_it)
  std::vector<KernelVariant> variants;  // the case's variants that have a CUDA kernel
  std::string skip;                     // not run: why ("pao has no CUDA kernel for a ... case")
  std::string bad_case;                 // the oracle refused the case: its error
  golden::GoldenTensors golden;         // when neither skip nor bad_case
};

/// A case as pao's CUDA kernels run it: vLLM's GPU (warp 32, 128 threads per CTA), with the case's
/// partitions and tiles.
cases::Case as_cuda_runs_it(cases::Case c);

/// The oracle side of `spec`. Never throws pao::Error (a refused case is bad_case); thread-safe.
CaseOracle case_oracle(const cases::Case& spec);

}  // namespace pao::cuda::check

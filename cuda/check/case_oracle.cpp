// The oracle side of pao-cuda-check's cases (check/case_oracle.hpp).
#include "check/case_oracle.hpp"

#include "check/case_params.hpp"
#include "pao/core/error.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/kernel_tuning.hpp"

namespace pao::cuda::check {

cases::Case as_cuda_runs_it(cases::Case c) {
  const KernelTuning gpu;
  c.warp_size = gpu.warp_size;
  c.threads_per_cta = gpu.threads_per_cta;
  return c;
}

CaseOracle case_oracle(const cases::Case& spec) {
  CaseOracle o;
  o.c = as_cuda_runs_it(spec);
  const kinds::KernelKind& kind = kinds::kind_of(o.c);
  for (const KernelVariant v : kind.traits().variants)
    if (has_cuda_kernel(v)) o.variants.push_back(v);
  if (o.variants.empty() || kind.writes_cache()) {  // no CUDA cache write yet
    o.skip = "pao has no CUDA kernel for a " + std::string(kind.name()) + " case";
    return o;
  }
  try {
    o.golden = golden::make_golden(o.c);
  } catch (const Error& e) {
    o.bad_case = e.what();
  }
  return o;
}

}  // namespace pao::cuda::check

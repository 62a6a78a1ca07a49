// Runs one decode or prefix case on the GPU through pao::cuda's launchers, the way the harness wants it:
// every output buffer between guard bytes and pre-filled with NaN bytes (an element the kernel
// never writes shows up as a mismatch), the caches between NaN bytes (a stray read shows up as a
// NaN in the output; unused slots inside the caches already hold NaN, see make_decode_case).
#pragma once

#include <string>
#include <vector>

#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/plan/decode_plan.hpp"

namespace pao::cuda::check {

/// A CUDA runtime error (allocation, copy, a fault inside a kernel): the context may be unusable,
/// so the harness stops. Launcher Status failures are plain pao::Error.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// Throws CudaError("<what>: <name>: <string>") unless e == cudaSuccess (an int: cudaError_t).
void throw_if_cuda_error(int error, const char* what);

/// Whether a CUDA device can be used; if not, `why` says why (driver missing, no device...).
bool cuda_device_available(std::string& why);
/// "NVIDIA H200 (sm_90, 132 SMs)".
std::string cuda_device_name();

struct GpuDecodeOutputs {
  Tensor out;         // [num_seqs, num_heads, head_size]
  Tensor tmp_out;     // V2: [num_seqs, num_heads, max_num_partitions, head_size]
  Tensor max_logits;  // V2: [num_seqs, num_heads, max_num_partitions]
  Tensor exp_sums;    // V2: [num_seqs, num_heads, max_num_partitions]
  /// One entry per output buffer whose guard bytes changed ("tmp_out: 16 bytes after the end").
  std::vector<std::string> guard_failures;
};

/// Runs V1 or V2 (+ reduce) on `c` with `options` (the case's options plus any per-head
/// scales). Throws pao::Error with the launcher's Status message, CudaError on a CUDA error.
GpuDecodeOutputs run_decode_on_gpu(DecodeKernel kernel, const cases::DecodeCase& c,
                                   const AttentionOptions& options);

struct GpuPrefixOutputs {
  Tensor out;  // [num_tokens, num_heads, head_size]
  std::vector<std::string> guard_failures;
};

/// Runs the prefix kernel on `c` with `options`; throws as run_decode_on_gpu does.
GpuPrefixOutputs run_prefix_on_gpu(const cases::PrefixCase& c, const AttentionOptions& options);

}  // namespace pao::cuda::check

// One decode or prefix case on the GPU through pao::cuda's launchers, as the harness and the
// benchmark want it: every output buffer between guard bytes and pre-filled with NaN bytes (an
// element the kernel never writes shows up as a mismatch), the caches between NaN bytes (a stray
// read shows up as a NaN in the output; unused slots inside the caches already hold NaN, see
// make_decode_case). A DeviceDecodeCase / DevicePrefixCase uploads once and launches as often as
// asked (pao-cuda-bench times launch()); outputs() downloads and checks every guard.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/filled_case.hpp"
#include "check/case_params.hpp"  // has_cuda_kernel
#include "check/cuda_device.hpp"  // CudaError, throw_if_cuda_error, cuda_device_available
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/core/tensor.hpp"
#include "pao/cuda/status.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/plan/decode_plan.hpp"
#include "pao/plan/prefix_plan.hpp"

namespace pao::cuda::check {

struct GpuDecodeOutputs {
  Tensor out;         // [num_seqs, num_heads, head_size]
  Tensor tmp_out;     // V2: [num_seqs, num_heads, max_num_partitions, head_size]
  Tensor max_logits;  // V2: [num_seqs, num_heads, max_num_partitions]
  Tensor exp_sums;    // V2: [num_seqs, num_heads, max_num_partitions]
  /// One entry per buffer whose guard bytes changed ("tmp_out: 16 bytes after the end").
  std::vector<std::string> guard_failures;
};

struct GpuPrefixOutputs {
  Tensor out;  // [num_tokens, num_heads, head_size]
  std::vector<std::string> guard_failures;
};

/// V1 or V2 (+ reduce) of a decode case on the device, with the case's partition_size.
/// Throws pao::Error with the launcher's Status message (a plan the kernels refuse), CudaError on
/// a CUDA error.
class DeviceDecodeCase {
 public:
  DeviceDecodeCase(KernelVariant kernel, const cases::DecodeCase& c, const AttentionOptions& options);
  /// A case the device fills (pao-cuda-bench's constant cases): nothing uploaded but the block
  /// tables, lengths and scalars.
  DeviceDecodeCase(KernelVariant kernel, const bench::FilledDecodeCase& c, const AttentionOptions& options);
  ~DeviceDecodeCase();
  DeviceDecodeCase(const DeviceDecodeCase&) = delete;
  DeviceDecodeCase& operator=(const DeviceDecodeCase&) = delete;

  /// Plans `kernel` with `partition_size` (V2) on the same inputs and gives it fresh outputs:
  /// pao-cuda-bench times every kernel of a case on one upload. Throws as the constructor does.
  void select(KernelVariant kernel, std::int32_t partition_size);
  /// Launches the kernels on `stream` without waiting (V2: attention, then reduce).
  Status launch(cudaStream_t stream = nullptr) const;
  /// Waits for the device, downloads every output and checks every guard zone.
  GpuDecodeOutputs outputs() const;
  const DecodePlan& plan() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The prefix kernel on a prefix case, with the case's tiles; throws as DeviceDecodeCase does.
class DevicePrefixCase {
 public:
  DevicePrefixCase(const cases::PrefixCase& c, const AttentionOptions& options);
  DevicePrefixCase(const bench::FilledPrefixCase& c, const AttentionOptions& options);
  ~DevicePrefixCase();
  DevicePrefixCase(const DevicePrefixCase&) = delete;
  DevicePrefixCase& operator=(const DevicePrefixCase&) = delete;

  Status launch(cudaStream_t stream = nullptr) const;
  GpuPrefixOutputs outputs() const;
  const PrefixPlan& plan() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// What one CUDA kernel variant wrote for a case: its outputs under the golden's names (v1.out;
/// v2.out, v2.tmp_out, v2.max_logits, v2.exp_sums; prefix.out) and the guard zones it overwrote.
struct GpuRun {
  std::vector<std::pair<std::string, Tensor>> outputs;
  std::vector<std::string> guard_failures;
};

/// One launch of `variant` on a golden's inputs (decode_case_of / prefix_case_of), with its case's
/// partitions and tiles: what pao-cuda-check judges. Throws as DeviceDecodeCase does.
GpuRun run_on_gpu(KernelVariant variant, const golden::GoldenTensors& golden);

}  // namespace pao::cuda::check

// The argument of every decode kernel (attention and reduce): the caller's DecodeParams plus
// what the launcher took from the plan. Passed by value. Plain C++ (the CPU emulation uses it).
#pragma once

#include <cstdint>

#include "pao/cuda/decode_launch.hpp"
#include "pao/cuda/decode_params.hpp"

namespace pao::cuda::detail {

struct DecodeKernelArgs {
  DecodeParams p;
  std::int32_t partition_size = 0;      // 0: V1; V2: a multiple of the block size
  std::int32_t max_num_partitions = 1;  // the partition stride of tmp_out / max_logits / exp_sums
  /// Capacity of the attention kernel's logits buffer in tokens (dynamic shared memory / 4): a
  /// device seq_len beyond the host's max_seq_len would overflow it, so such a CTA writes NaN.
  std::int32_t logits_capacity = 0;
  bool key_vector_loads = false;
  bool value_vector_loads = false;
};

inline DecodeKernelArgs make_decode_kernel_args(const DecodeParams& params, const DecodeLaunch& launch) {
  DecodeKernelArgs a;
  a.p = params;
  a.partition_size = launch.partition_size;
  a.max_num_partitions = launch.max_num_partitions;
  a.logits_capacity = static_cast<std::int32_t>(launch.attention.dynamic_shared_bytes / sizeof(float));
  a.key_vector_loads = launch.key_vector_loads;
  a.value_vector_loads = launch.value_vector_loads;
  return a;
}

}  // namespace pao::cuda::detail

// The measurement CSV pao-cuda-bench writes and `pao sim calibrate` / `pao sim validate` read
// (sim/include/pao/sim/studies/calibrate.hpp). Plain C++, so the CPU tests parse what it writes.
#pragma once

#include <cstdint>
#include <string>

#include "pao/core/dtype.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::cuda::bench {

struct MeasurementRow : LaunchShape {        // num_seqs, num_heads, num_kv_heads, head_size, block_size
  std::string device;                        // e.g. "NVIDIA H200" (commas replaced)
  bool prefix = false;                       // the prefix kernel ("prefix:MxN"); else decode
  std::int32_t partition_size = 0;           // decode: 0 = V1, else V2's partition size
  std::int32_t block_m = 128, block_n = 64;  // prefix tiles
  std::int32_t query_len = 1;                // prefix: new tokens per sequence (seq_len includes them)
  DType dtype = DType::f16;
  DType kv_cache_dtype = DType::f16;
  std::int32_t seq_len = 0;      // every sequence has this length
  std::int32_t max_seq_len = 0;  // 0: seq_len
  double time_us = 0;            // gpu: median over `repeats` CUDA-event timings (attention + reduce
                                 // for V2); loop: wall time / launches
  double stddev_us = 0;
  std::int32_t repeats = 0;
  std::string timing = "gpu";    // "gpu" or "loop"
  std::int32_t pool_blocks = 0;  // loop: the blocks of the pool the launches draw from (0: unset)
  double achieved_gbps = 0;      // bytes the launch must move / time_us
  std::string note;              // informational (the case's id)
};

/// The header line: device,kernel,partition_size,num_seqs,...,note.
std::string measurement_csv_header();
/// One line; kernel "v1", "v2:PARTITION" or "prefix:MxN", kv_cache_dtype "auto" when it equals
/// dtype.
std::string measurement_csv_row(const MeasurementRow& row);

}  // namespace pao::cuda::bench

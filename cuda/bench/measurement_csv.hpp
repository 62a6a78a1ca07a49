// The measurement CSV pao-cuda-bench writes and `pao sim calibrate` reads
// (sim/include/pao/sim/studies/calibrate.hpp). Plain C++, so the CPU tests parse what it writes.
#pragma once

#include <cstdint>
#include <string>

#include "pao/core/dtype.hpp"

namespace pao::cuda::bench {

struct MeasurementRow {
  std::string device;                        // e.g. "NVIDIA H200" (commas replaced)
  bool prefix = false;                       // the prefix kernel ("prefix:MxN"); else decode
  std::int32_t partition_size = 0;           // decode: 0 = V1, else V2's partition size
  std::int32_t block_m = 128, block_n = 64;  // prefix tiles
  std::int32_t query_len = 1;                // prefix: new tokens per sequence (seq_len includes them)
  std::int32_t num_seqs = 0, num_heads = 0, num_kv_heads = 0, head_size = 0, block_size = 16;
  DType dtype = DType::f16;
  DType kv_cache_dtype = DType::f16;
  std::int32_t seq_len = 0;  // every sequence has this length; max_seq_len = seq_len
  double time_us = 0;        // median over `repeats` CUDA-event timings (attention + reduce for V2)
  double stddev_us = 0;
  std::int32_t repeats = 0;
  double achieved_gbps = 0;  // bytes the launch must move / time_us
  std::string note;          // informational (the model's name)
};

/// The header line: device,kernel,partition_size,num_seqs,...,note.
std::string measurement_csv_header();
/// One line; kernel "v1", "v2:PARTITION" or "prefix:MxN", timing "gpu", kv_cache_dtype "auto"
/// when it equals dtype.
std::string measurement_csv_row(const MeasurementRow& row);

}  // namespace pao::cuda::bench

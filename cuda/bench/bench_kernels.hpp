// What pao-cuda-bench times on a case: the kernel specs of --kernels ("v1", "v2", "v2:512",
// "prefix") and which of them apply to a case, the case each one runs (V2 at its partition size),
// and the bytes a launch must move at least (for the achieved bandwidth). Plain C++: the CPU tests
// cover it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/plan/decode_plan.hpp"
#include "pao/plan/kernel_variant.hpp"

namespace pao::cuda {

struct BenchKernel {
  std::string label;  // "v1", "v2:512", "v2" (the case's partition_size), "prefix"
  KernelVariant variant = KernelVariant::v2;
  std::int32_t partition_size = 0;  // V2; 0: the case's own
};

/// Parses "v1,v2:256,v2,prefix". Throws pao::Error naming the bad entry.
std::vector<BenchKernel> parse_bench_kernels(std::string_view list);

/// The kernels of `all` that run on `c`: those whose variant is one of its kind's (V1 / V2 for
/// decode cases, prefix for prefix cases).
std::vector<BenchKernel> kernels_of_case(const std::vector<BenchKernel>& all, const cases::Case& c);

/// `c` as `k` runs it: V2 with the partition size of `k` when it names one. Throws pao::Error when
/// the case refuses it (a partition size that is not a multiple of the block size).
cases::Case case_for_kernel(const cases::Case& c, const BenchKernel& k);

/// A measurement row has one seq_len (and query_len): every sequence of a benchmark case must
/// have the same lengths, and its kind must run as a variant pao has a CUDA kernel for (decode,
/// prefix). Throws pao::Error saying which rule the case breaks.
void require_bench_case(const cases::Case& c);

/// The device memory of a case's buffers (caches, query, outputs, V2 partials), in GiB.
double bench_case_gib(const cases::Case& c);

/// Bytes a launch must move at least: K and V of every token once, the query and out, and V2's
/// partials written and read back (decode); plus the new tokens' K/V (prefix).
double decode_bytes_moved(const cases::Case& c, const DecodePlan& plan);
double prefix_bytes_moved(const cases::Case& c);

}  // namespace pao::cuda

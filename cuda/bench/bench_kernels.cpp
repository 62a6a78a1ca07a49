// The kernels pao-cuda-bench times on a case (bench/bench_kernels.hpp).
#include "bench/bench_kernels.hpp"

#include <algorithm>
#include <charconv>

#include "check/case_params.hpp"
#include "pao/cases/case_schema.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/plan/partition.hpp"

namespace pao::cuda {

namespace {

std::vector<std::string_view> split(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    out.push_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

std::vector<BenchKernel> parse_bench_kernels(std::string_view list) {
  std::vector<BenchKernel> out;
  for (const std::string_view item : split(list)) {
    BenchKernel k;
    k.label = std::string(item);
    if (item == "v1") {
      k.variant = KernelVariant::v1;
    } else if (item == "prefix") {
      k.variant = KernelVariant::prefix;
    } else if (item == "v2") {
      k.variant = KernelVariant::v2;
    } else if (item.starts_with("v2:")) {
      const std::string_view n = item.substr(3);
      const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), k.partition_size);
      if (ec != std::errc() || end != n.data() + n.size() || k.partition_size <= 0)
        fail("--kernels: '", item, "': the partition size after v2: must be a positive integer");
    } else {
      fail("--kernels: unknown kernel '", item, "' (expected v1, v2, v2:PARTITION or prefix)");
    }
    out.push_back(k);
  }
  require(!out.empty(), "--kernels: no kernel given");
  return out;
}

std::vector<BenchKernel> kernels_of_case(const std::vector<BenchKernel>& all, const cases::Case& c) {
  std::vector<BenchKernel> out;
  const kinds::KernelKind& kind = kinds::kind_of(c);
  for (const auto& k : all)
    if (kind.runs_as(k.variant)) out.push_back(k);
  return out;
}

cases::Case case_for_kernel(const cases::Case& c, const BenchKernel& k) {
  if (k.variant != KernelVariant::v2 || k.partition_size == 0 || k.partition_size == c.partition_size)
    return c;
  const std::string n = std::to_string(k.partition_size);
  cases::Case out = cases::override_field(c, "partition_size", std::int64_t{k.partition_size}, "p" + n);
  out.id = c.id;  // the case's name in the CSV; the kernel column says the partition size
  return out;
}

void require_bench_case(const cases::Case& c) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  require(std::any_of(kind.traits().variants.begin(), kind.traits().variants.end(), check::has_cuda_kernel),
          "case ", c.id, ": a ", kind.name(), " case (pao has no CUDA kernel for it to time)");
  require(!c.seq_lens.empty(), "case ", c.id, ": no sequences");
  const bool same_len =
      std::all_of(c.seq_lens.begin(), c.seq_lens.end(), [&](auto l) { return l == c.seq_lens[0]; });
  const bool same_query =
      std::all_of(c.query_lens.begin(), c.query_lens.end(), [&](auto q) { return q == c.query_lens[0]; });
  require(
      same_len && same_query, "case ", c.id,
      ": its sequences have different lengths; a measurement row has one seq_len (and query_len): give every "
      "sequence the same");
}

double bench_case_gib(const cases::Case& c) {
  const std::int64_t blocks = cases::pool_num_blocks(c);
  const double cache = 2.0 * static_cast<double>(blocks) * c.block_size * c.num_kv_heads * c.head_size *
                       static_cast<double>(dtype_size(c.cache_storage_dtype()));
  const double es = static_cast<double>(dtype_size(c.dtype));
  const double rows = static_cast<double>(c.num_tokens()) * c.num_heads;
  double bytes = cache + 2 * rows * c.head_size * es;  // query, out
  const kinds::KernelKind& kind = kinds::kind_of(c);
  if (kind.partitioned()) bytes += rows * cases::max_num_partitions(c) * (c.head_size * es + 8.0);
  if (kind.traits().new_tokens)
    bytes += 2.0 * c.num_tokens() * c.num_kv_heads * c.head_size * es;  // key, value
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

double decode_bytes_moved(const cases::Case& c, const DecodePlan& plan) {
  double tokens = 0;
  for (auto len : c.seq_lens) tokens += len;
  const double es = static_cast<double>(dtype_size(c.dtype));
  const double cs = static_cast<double>(dtype_size(c.cache_storage_dtype()));
  const double rows = static_cast<double>(c.num_seqs) * c.num_heads;
  double bytes = 2.0 * tokens * c.num_kv_heads * c.head_size * cs + 2 * rows * c.head_size * es;
  if (plan.kernel == KernelVariant::v2)
    bytes += 2 * rows * plan.max_num_partitions * (c.head_size * es + 8.0);
  return bytes;
}

double prefix_bytes_moved(const cases::Case& c) {
  double context = 0;
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) context += c.context_len(s);
  const double es = static_cast<double>(dtype_size(c.dtype));
  const double cs = static_cast<double>(dtype_size(c.cache_storage_dtype()));
  const double tokens = c.num_tokens();
  return 2.0 * context * c.num_kv_heads * c.head_size * cs +
         tokens * c.head_size * es * (2.0 * c.num_heads + 2.0 * c.num_kv_heads);
}

}  // namespace pao::cuda

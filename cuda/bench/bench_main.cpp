// pao-cuda-bench: times the CUDA kernels — decode V1 and V2 (partition 256 / 512 / 1024, attention
// plus reduce) and prefix — over sequence lengths and batch sizes, with CUDA events around each launch after
// warm-up and an L2 flush, and writes the measurement CSV that `pao sim calibrate` reads
// (sim/include/pao/sim/studies/calibrate.hpp; columns in docs/cuda.md). Prints achieved HBM bandwidth as
// a fraction of the device's peak (memory clock x bus width), a ratio measured in the same run;
// it never passes or fails on absolute time.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/measurement_csv.hpp"
#include "pao/core/random.hpp"
#include "pao/cuda/paged_attention_cuda.hpp"
#include "pao/cuda/prefix_attention_cuda.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/plan/partition.hpp"

namespace {

using namespace pao;

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "pao-cuda-bench: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct Buffer {
  void* ptr = nullptr;
  explicit Buffer(std::size_t bytes) {
    if (!cuda_ok(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc")) ptr = nullptr;
  }
  ~Buffer() { cudaFree(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

struct Model {
  const char* name;
  std::int32_t num_heads, num_kv_heads, head_size;
};

struct Options {
  std::string out = "pao-cuda-bench.csv";
  std::string dtype = "f16", kv_cache_dtype = "auto";
  int warmup = 3, repeats = 20;
  double max_kv_gib = 24;
  bool quick = false;
};

struct Measured {
  double median_us = 0, stddev_us = 0;
};

struct Device {
  std::string name;
  double peak_gbps = 0;
  std::size_t l2_bytes = 0;
};

Device describe_device() {
  Device d;
  int dev = 0, clock_khz = 0, bus_bits = 0, l2 = 0;
  cudaDeviceProp prop{};
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  d.name = prop.name;
  d.peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
  d.l2_bytes = static_cast<std::size_t>(l2);
  return d;
}

/// Device buffers of one workload, shared by every kernel timed on it.
struct DeviceBuffers {
  std::vector<std::unique_ptr<Buffer>> buffers;

  void* alloc(std::size_t bytes, int fill) {
    buffers.push_back(std::make_unique<Buffer>(bytes));
    void* ptr = buffers.back()->ptr;
    if (ptr) cudaMemset(ptr, fill, bytes);
    return ptr;
  }
  bool all_allocated() const {
    for (const auto& b : buffers)
      if (!b->ptr) return false;
    return true;
  }
};

/// The paged cache of `num_seqs` sequences of `tokens` cached tokens each, in vLLM's layouts
/// (pao's layout builders), filled with 0x11 bytes (small positive values in every dtype: no NaN,
/// no subnormal slow path), and a block table that is a random permutation of the pool, as a
/// serving engine's allocator leaves it. Sets the sizes, caches, layouts, tables and scale of p.
void setup_paged_cache(DeviceBuffers& w, cuda::PagedAttentionParams& p, const Model& m, std::int32_t num_seqs,
                       std::int32_t tokens, DType dtype, DType cache, std::uint64_t seed) {
  const std::int32_t bs = 16;
  p.dtype = dtype;
  p.kv_cache_dtype = cache;
  p.num_seqs = num_seqs, p.num_heads = m.num_heads, p.num_kv_heads = m.num_kv_heads;
  p.head_size = m.head_size, p.block_size = bs;
  p.scale = default_scale(m.head_size);
  const std::int64_t blocks_per_seq = std::max(1, blocks_for_tokens(tokens, bs));
  const std::int64_t num_blocks = blocks_per_seq * num_seqs;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
    const Shape shape = cache_shape(KVLayout::vllm, t, num_blocks, m.num_kv_heads, m.head_size, bs, cache);
    void* data = w.alloc(static_cast<std::size_t>(shape_numel(shape)) * dtype_size(cache), 0x11);
    (t == CacheTensor::key ? p.key_cache : p.value_cache) = data;
    (t == CacheTensor::key ? p.key_layout : p.value_layout) =
        contiguous_cache_layout(KVLayout::vllm, t, shape);
  }
  std::vector<std::int32_t> table(static_cast<std::size_t>(num_blocks));
  for (std::int64_t i = 0; i < num_blocks; ++i)
    table[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  Rng rng(seed);
  for (std::size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[rng.below(i)]);
  void* tables = w.alloc(table.size() * 4, 0);
  if (tables) cudaMemcpy(tables, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  p.block_tables = static_cast<std::int32_t*>(tables);
  p.block_table_stride = blocks_per_seq;
}

/// A decode batch: num_seqs sequences of seq_len tokens.
struct Workload : DeviceBuffers {
  cuda::DecodeParams p;
  std::vector<std::int32_t> seq_lens;
  double kv_bytes = 0;
};

std::unique_ptr<Workload> make_workload(const Model& m, std::int32_t num_seqs, std::int32_t seq_len,
                                        DType dtype, DType cache, std::int32_t max_partitions) {
  auto w = std::make_unique<Workload>();
  cuda::DecodeParams& p = w->p;
  setup_paged_cache(*w, p, m, num_seqs, seq_len, dtype, cache,
                    static_cast<std::uint64_t>(seq_len) * 131 + static_cast<std::uint64_t>(num_seqs));
  const std::size_t es = dtype_size(dtype), cs = dtype_size(cache);
  p.query = w->alloc(static_cast<std::size_t>(num_seqs) * m.num_heads * m.head_size * es, 0x11);
  p.query_seq_stride = static_cast<std::int64_t>(m.num_heads) * m.head_size;
  p.query_head_stride = m.head_size;
  w->seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  void* lens = w->alloc(w->seq_lens.size() * 4, 0);
  if (lens) cudaMemcpy(lens, w->seq_lens.data(), w->seq_lens.size() * 4, cudaMemcpyHostToDevice);
  p.seq_lens = static_cast<std::int32_t*>(lens);
  const std::size_t rows = static_cast<std::size_t>(num_seqs) * m.num_heads;
  p.out = w->alloc(rows * m.head_size * es, 0);
  p.tmp_out = w->alloc(rows * max_partitions * m.head_size * es, 0);
  p.max_logits = static_cast<float*>(w->alloc(rows * max_partitions * 4, 0));
  p.exp_sums = static_cast<float*>(w->alloc(rows * max_partitions * 4, 0));
  if (!w->all_allocated()) return nullptr;
  w->kv_bytes =
      2.0 * static_cast<double>(num_seqs) * seq_len * m.num_kv_heads * m.head_size * static_cast<double>(cs);
  return w;
}

/// Bytes a launch must move at least: K and V once, the query, out, and V2's partials written
/// and read back.
double bytes_moved(const Workload& w, const DecodePlan& plan) {
  const auto& p = w.p;
  const double es = static_cast<double>(dtype_size(p.dtype));
  const double rows = static_cast<double>(p.num_seqs) * p.num_heads;
  double bytes = w.kv_bytes + 2 * rows * p.head_size * es;
  if (plan.kernel == DecodeKernel::v2) bytes += 2 * rows * plan.max_num_partitions * (p.head_size * es + 8.0);
  return bytes;
}

/// Times `launch` (one kernel call, or V2's attention + reduce): warm-up, then per repeat an L2
/// flush and CUDA events around the launch. False with `why` set when the launcher refused the
/// call; false with `why` empty on a CUDA error.
bool time_launch(const std::function<cuda::Status()>& launch, const Options& o, void* flush,
                 std::size_t flush_bytes, Measured& m, std::string& why) {
  for (int i = 0; i < o.warmup; ++i) {
    if (cuda::Status s = launch(); !s.ok()) {
      why = s.message();
      return false;
    }
  }
  if (!cuda_ok(cudaDeviceSynchronize(), "warm-up")) return false;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> us;
  for (int r = 0; r < o.repeats; ++r) {
    cudaMemsetAsync(flush, r & 0xff, flush_bytes);  // evicts K/V of the previous run from L2
    cudaEventRecord(start);
    (void)launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    us.push_back(1e3 * ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!cuda_ok(cudaGetLastError(), "timed runs")) return false;
  std::sort(us.begin(), us.end());
  m.median_us = us[us.size() / 2];
  double mean = 0, var = 0;
  for (double u : us) mean += u / static_cast<double>(us.size());
  for (double u : us) var += (u - mean) * (u - mean) / static_cast<double>(us.size());
  m.stddev_us = std::sqrt(var);
  return true;
}

/// A prefix batch: num_seqs sequences of seq_len tokens, the last query_len of them new.
struct PrefixWorkload : DeviceBuffers {
  cuda::PrefixParams p;
  std::vector<std::int32_t> seq_lens, query_lens;
  double bytes = 0;  // context K/V once, new K/V, query and out
};

std::unique_ptr<PrefixWorkload> make_prefix_workload(const Model& m, std::int32_t num_seqs,
                                                     std::int32_t seq_len, std::int32_t query_len,
                                                     DType dtype, DType cache) {
  auto w = std::make_unique<PrefixWorkload>();
  cuda::PrefixParams& p = w->p;
  const std::int32_t ctx = seq_len - query_len;
  setup_paged_cache(*w, p, m, num_seqs, ctx, dtype, cache,
                    static_cast<std::uint64_t>(seq_len) * 7 + static_cast<std::uint64_t>(num_seqs));
  p.num_tokens = num_seqs * query_len;
  const std::size_t es = dtype_size(dtype), cs = dtype_size(cache);
  const std::size_t tokens = static_cast<std::size_t>(p.num_tokens);
  p.query = w->alloc(tokens * m.num_heads * m.head_size * es, 0x11);
  p.key = w->alloc(tokens * m.num_kv_heads * m.head_size * es, 0x11);
  p.value = w->alloc(tokens * m.num_kv_heads * m.head_size * es, 0x11);
  p.out = w->alloc(tokens * m.num_heads * m.head_size * es, 0);
  p.query_token_stride = static_cast<std::int64_t>(m.num_heads) * m.head_size,
  p.query_head_stride = m.head_size;
  p.key_token_stride = p.value_token_stride = static_cast<std::int64_t>(m.num_kv_heads) * m.head_size;
  p.key_head_stride = p.value_head_stride = m.head_size;
  if (!w->all_allocated()) return nullptr;
  w->seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  w->query_lens.assign(static_cast<std::size_t>(num_seqs), query_len);
  w->bytes =
      2.0 * num_seqs * static_cast<double>(ctx) * m.num_kv_heads * m.head_size * static_cast<double>(cs) +
      static_cast<double>(tokens) * m.head_size * static_cast<double>(es) *
          (2.0 * m.num_heads + 2.0 * m.num_kv_heads);
  return w;
}

void usage(std::FILE* to) {
  std::fprintf(
      to,
      "usage: pao-cuda-bench [--out FILE.csv] [--quick] [--repeats N] [--warmup N] [--max-kv-gib G]\n"
      "                      [--dtype f16|bf16|f32] [--kv-cache-dtype auto|fp8_e4m3|fp8_e5m2]\n"
      "Times V1, V2 (partition 256/512/1024) and prefix (128x64 tiles, chunks of 128 / 512 new tokens)\n"
      "on Llama-like 32/8x128 and Qwen3-Next-like 16/2x256 heads over batch sizes and sequence\n"
      "lengths (block size 16); writes the measurement CSV of `pao sim calibrate`.\n"
      "Exit 77 without a CUDA device.\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--out" && v)
      o.out = argv[++i];
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--repeats" && v)
      o.repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--warmup" && v)
      o.warmup = std::max(0, std::atoi(argv[++i]));
    else if (a == "--max-kv-gib" && v)
      o.max_kv_gib = std::atof(argv[++i]);
    else if (a == "--dtype" && v)
      o.dtype = argv[++i];
    else if (a == "--kv-cache-dtype" && v)
      o.kv_cache_dtype = argv[++i];
    else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "pao-cuda-bench: unexpected argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  DType dtype, cache;
  try {
    dtype = parse_dtype(o.dtype, "--dtype");
    cache = o.kv_cache_dtype == "auto" ? dtype : parse_dtype(o.kv_cache_dtype, "--kv-cache-dtype");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pao-cuda-bench: %s\n", e.what());
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("pao-cuda-bench: SKIPPED, no usable CUDA device: nothing was measured\n");
    return 77;
  }
  const Device dev = describe_device();
  std::printf("pao-cuda-bench: %s, peak HBM %.0f GB/s (memory clock x bus width), L2 %zu MiB\n",
              dev.name.c_str(), dev.peak_gbps, dev.l2_bytes >> 20);

  const std::vector<Model> models = {{"llama-32/8x128", 32, 8, 128}, {"qwen3next-16/2x256", 16, 2, 256}};
  const std::vector<std::int32_t> batches =
      o.quick ? std::vector<std::int32_t>{1, 16} : std::vector<std::int32_t>{1, 8, 32, 128};
  const std::vector<std::int32_t> lengths =
      o.quick ? std::vector<std::int32_t>{1024, 8192, 32768}
              : std::vector<std::int32_t>{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  const std::vector<std::int32_t> partitions = {0, 256, 512, 1024};  // 0: V1

  const std::size_t flush_bytes = std::max<std::size_t>(2 * dev.l2_bytes, std::size_t{64} << 20);
  Buffer flush(flush_bytes);
  if (!flush.ptr) return 3;

  std::ostringstream csv;
  csv << "# pao-cuda-bench on " << dev.name << "; peak HBM " << dev.peak_gbps << " GB/s; time_us = median of "
      << o.repeats << " CUDA-event timings after " << o.warmup
      << " warm-up launches, L2 flushed before each\n";
  csv << cuda::bench::measurement_csv_header() << "\n";
  std::printf("%-20s %6s %7s %-8s %10s %8s %7s\n", "model", "batch", "seq_len", "kernel", "time_us", "GB/s",
              "of peak");
  for (const auto& m : models) {
    for (auto batch : batches) {
      for (auto len : lengths) {
        const double kv =
            2.0 * batch * len * m.num_kv_heads * m.head_size * static_cast<double>(dtype_size(cache));
        if (kv > o.max_kv_gib * (1 << 30)) continue;
        const auto w = make_workload(m, batch, len, dtype, cache, (len + 255) / 256);
        if (!w) return 3;
        for (auto part : partitions) {
          const DecodeKernel kernel = part == 0 ? DecodeKernel::v1 : DecodeKernel::v2;
          DecodePlan plan;
          if (cuda::Status s =
                  cuda::plan_decode_launch(kernel, w->p, len, part ? part : 512, w->seq_lens, plan);
              !s.ok()) {
            std::fprintf(stderr, "pao-cuda-bench: %s: %s\n", m.name, s.message().c_str());
            continue;
          }
          Measured t;
          std::string why;
          const std::string kname = part == 0 ? "v1" : "v2:" + std::to_string(part);
          const auto launch = [&] {
            return kernel == DecodeKernel::v1 ? cuda::paged_attention_v1(w->p, plan)
                                              : cuda::paged_attention_v2(w->p, plan);
          };
          if (!time_launch(launch, o, flush.ptr, flush_bytes, t, why)) {
            if (why.empty()) return 3;  // a CUDA error: the context is gone
            std::fprintf(stderr, "skipped %s batch %d seq_len %d %s: %s\n", m.name, batch, len, kname.c_str(),
                         why.c_str());
            continue;
          }
          const double gbps = bytes_moved(*w, plan) / t.median_us / 1e3;
          cuda::bench::MeasurementRow row;
          row.device = dev.name;
          row.partition_size = part;
          row.num_seqs = batch, row.num_heads = m.num_heads, row.num_kv_heads = m.num_kv_heads;
          row.head_size = m.head_size, row.block_size = w->p.block_size;
          row.dtype = dtype, row.kv_cache_dtype = cache;
          row.seq_len = len;
          row.time_us = t.median_us, row.stddev_us = t.stddev_us, row.repeats = o.repeats;
          row.achieved_gbps = gbps;
          row.note = m.name;
          csv << cuda::bench::measurement_csv_row(row) << "\n";
          std::printf("%-20s %6d %7d %-8s %10.2f %8.0f %6.1f%%\n", m.name, batch, len, kname.c_str(),
                      t.median_us, gbps, 100 * gbps / dev.peak_gbps);
        }
      }
    }
  }
  // Prefix (chunked prefill): vLLM's tiles 128 x 64 (context tiles of 32), a chunk of new tokens
  // on top of a cached context.
  const std::vector<std::int32_t> prefix_batches =
      o.quick ? std::vector<std::int32_t>{1, 4} : std::vector<std::int32_t>{1, 4, 16};
  const std::vector<std::int32_t> chunks = {128, 512};
  const std::vector<std::int32_t> prefix_lengths =
      o.quick ? std::vector<std::int32_t>{1024, 8192} : std::vector<std::int32_t>{1024, 4096, 16384, 65536};
  for (const auto& m : models) {
    for (auto batch : prefix_batches) {
      for (auto chunk : chunks) {
        for (auto len : prefix_lengths) {
          const double kv =
              2.0 * batch * len * m.num_kv_heads * m.head_size * static_cast<double>(dtype_size(cache));
          if (kv > o.max_kv_gib * (1 << 30) || chunk > len) continue;
          const auto w = make_prefix_workload(m, batch, len, chunk, dtype, cache);
          if (!w) return 3;
          PrefixPlan plan;
          if (cuda::Status s =
                  cuda::plan_prefix_launch(w->p, w->seq_lens, w->query_lens, 128, 64, 32, 0, plan);
              !s.ok()) {
            std::fprintf(stderr, "pao-cuda-bench: %s: %s\n", m.name, s.message().c_str());
            continue;
          }
          Measured t;
          std::string why;
          const auto launch = [&] { return cuda::prefix_attention(w->p, plan); };
          if (!time_launch(launch, o, flush.ptr, flush_bytes, t, why)) {
            if (why.empty()) return 3;
            std::fprintf(stderr, "skipped %s batch %d seq_len %d prefix: %s\n", m.name, batch, len,
                         why.c_str());
            continue;
          }
          const double gbps = w->bytes / t.median_us / 1e3;
          cuda::bench::MeasurementRow row;
          row.device = dev.name;
          row.prefix = true;
          row.block_m = 128, row.block_n = 64, row.query_len = chunk;
          row.num_seqs = batch, row.num_heads = m.num_heads, row.num_kv_heads = m.num_kv_heads;
          row.head_size = m.head_size, row.block_size = w->p.block_size;
          row.dtype = dtype, row.kv_cache_dtype = cache;
          row.seq_len = len;
          row.time_us = t.median_us, row.stddev_us = t.stddev_us, row.repeats = o.repeats;
          row.achieved_gbps = gbps;
          row.note = m.name;
          csv << cuda::bench::measurement_csv_row(row) << "\n";
          std::printf("%-20s %6d %7d %-8s %10.2f %8.0f %6.1f%%  (query_len %d)\n", m.name, batch, len,
                      "prefix", t.median_us, gbps, 100 * gbps / dev.peak_gbps, chunk);
        }
      }
    }
  }

  std::ofstream out(o.out, std::ios::binary);
  out << csv.str();
  if (!out) {
    std::fprintf(stderr, "pao-cuda-bench: cannot write %s\n", o.out.c_str());
    return 2;
  }
  std::printf("wrote %s\n", o.out.c_str());
  return 0;
}

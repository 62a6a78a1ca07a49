// The probe's kernels and their launches (probe_kernels.hpp). Each kernel stamps its CTA's
// start and end with its SM's clock after a barrier, so a record spans the CTA's work and not its
// dispatch; instruction streams that must not be optimised away are inline PTX (asm volatile).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "check/cuda_device.hpp"  // CudaError, throw_if_cuda_error
#include "probe/probe_kernels.hpp"

namespace pao::cuda::probe {

namespace {

void check(cudaError_t e, const char* what) { check::throw_if_cuda_error(static_cast<int>(e), what); }

/// The SM's clock: %clock64, or under GPGPU-Sim (which aborts on %clock64) the 32-bit %clock, one
/// counter for the whole simulated device. Each read is its own volatile asm in its own branch, so
/// that the compiler cannot read both and select.
__device__ __forceinline__ std::uint64_t now(bool wide_clock) {
  if (wide_clock) {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
  }
  std::uint32_t t;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(t));
  return t;
}

__device__ __forceinline__ std::uint32_t sm_id() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ void write_record(CtaRecord* records, std::uint64_t start, std::uint64_t end,
                                             std::uint64_t work) {
  CtaRecord* r = records + blockIdx.x;
  r->sm = sm_id();
  r->start = start;
  r->end = end;
  r->work = work;
}

/// The CTA's clock after every thread reached this point (thread 0's reading).
__device__ __forceinline__ std::uint64_t cta_stamp(bool wide_clock) {
  __shared__ std::uint64_t stamp;
  __syncthreads();
  if (threadIdx.x == 0) stamp = now(wide_clock);
  __syncthreads();
  return stamp;
}

__global__ void occupancy_kernel(std::uint64_t spin, CtaRecord* records, bool wide_clock) {
  if (threadIdx.x == 0) {
    const std::uint64_t start = now(wide_clock);
    std::uint64_t t = start;
    while (t - start < spin) t = now(wide_clock);
    write_record(records, start, t, 1);
  }
  __syncthreads();  // the other threads hold the CTA's slot until thread 0 is done
}

__global__ void dependent_fma_kernel(std::int64_t fmas, float a, float b, float* sink, CtaRecord* records,
                                     bool wide_clock) {
  float x = static_cast<float>(threadIdx.x);
  const std::uint64_t start = now(wide_clock);
  for (std::int64_t i = 0; i < fmas; i += 32) {
#pragma unroll
    for (int k = 0; k < 32; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  }
  const std::uint64_t end = now(wide_clock);
  if (x == 1234.5f) sink[threadIdx.x] = x;
  if (threadIdx.x == 0) write_record(records, start, end, static_cast<std::uint64_t>(fmas));
}

__global__ void fma_throughput_kernel(std::int64_t iterations, float a, float b, float* sink,
                                      CtaRecord* records, bool wide_clock) {
  float x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = static_cast<float>(threadIdx.x + c);
  const std::uint64_t start = cta_stamp(wide_clock);
  for (std::int64_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
#pragma unroll
      for (int c = 0; c < 8; ++c) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x[c]) : "f"(a), "f"(b));
    }
  }
  const std::uint64_t end = cta_stamp(wide_clock);
  float s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  if (s == 1234.5f) sink[threadIdx.x] = s;
  if (threadIdx.x == 0)
    write_record(records, start, end, static_cast<std::uint64_t>(iterations) * 64 * (blockDim.x / warpSize));
}

__global__ void mma_kernel(const __half* tile, std::int64_t iterations, float* sink, CtaRecord* records,
                           bool wide_clock) {
  namespace w = nvcuda::wmma;
  w::fragment<w::matrix_a, 16, 16, 16, __half, w::row_major> a;
  w::fragment<w::matrix_b, 16, 16, 16, __half, w::col_major> b;
  w::fragment<w::accumulator, 16, 16, 16, float> c[4];
  w::load_matrix_sync(a, tile, 16);
  w::load_matrix_sync(b, tile, 16);
#pragma unroll
  for (auto& f : c) w::fill_fragment(f, 0.0f);
  const std::uint64_t start = cta_stamp(wide_clock);
  for (std::int64_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (auto& f : c) w::mma_sync(f, a, b, f);
  }
  const std::uint64_t end = cta_stamp(wide_clock);
  const float s = c[0].x[0] + c[1].x[0] + c[2].x[0] + c[3].x[0];
  if (s == 1234.5f) sink[threadIdx.x] = s;
  if (threadIdx.x == 0)
    write_record(records, start, end,
                 static_cast<std::uint64_t>(iterations) * 4 * 2 * 16 * 16 * 16 * (blockDim.x / warpSize));
}

/// Two f16 halves of `packed` as floats: the decode loop's conversion of a K element pair.
__device__ __forceinline__ void halves_to_floats(std::uint32_t packed, float& lo, float& hi) {
  asm volatile(
      "{ .reg .f16 h0, h1;\n"
      "  mov.b32 {h0, h1}, %2;\n"
      "  cvt.f32.f16 %0, h0;\n"
      "  cvt.f32.f16 %1, h1; }"
      : "=f"(lo), "=f"(hi)
      : "r"(packed));
}

__global__ void issue_mix_kernel(const uint4* rows, std::int64_t iterations, float q, float* sink,
                                 CtaRecord* records, bool wide_clock) {
  std::uint32_t offset = (threadIdx.x & 31u) * 16u;  // bytes into the 4 KiB of rows
  const char* base = reinterpret_cast<const char*>(rows);
  float acc = 0, best = -1e30f;
  const std::uint64_t start = cta_stamp(wide_clock);
  for (std::int64_t i = 0; i < iterations; ++i) {
    std::uint32_t v[4];
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                 : "l"(base + offset));
    float f[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) halves_to_floats(v[k], f[2 * k], f[2 * k + 1]);
#pragma unroll
    for (int k = 0; k < 8; ++k) asm volatile("fma.rn.f32 %0, %1, %2, %0;" : "+f"(acc) : "f"(f[k]), "f"(q));
    float s1, s2;
    asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 31, -1;" : "=f"(s1) : "f"(acc));
    asm volatile("shfl.sync.bfly.b32 %0, %1, 2, 31, -1;" : "=f"(s2) : "f"(s1));
    asm volatile("max.f32 %0, %0, %1;" : "+f"(best) : "f"(s2));
    asm volatile("add.u32 %0, %0, 512;" : "+r"(offset));
    asm volatile("and.b32 %0, %0, 4095;" : "+r"(offset));
  }
  const std::uint64_t end = cta_stamp(wide_clock);
  if (best == 1234.5f) sink[threadIdx.x] = best;
  if (threadIdx.x == 0)
    write_record(records, start, end,
                 static_cast<std::uint64_t>(iterations) * kIssueMixInstructions * (blockDim.x / warpSize));
}

template <int Unroll>
__global__ void stream_read_kernel(const uint4* buffer, std::size_t vectors_per_cta, int passes,
                                   std::uint32_t magic, std::uint32_t* sink, CtaRecord* records,
                                   bool wide_clock) {
  const uint4* p = buffer + blockIdx.x * vectors_per_cta;
  std::uint32_t acc = 0;
  const std::uint64_t start = cta_stamp(wide_clock);
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = threadIdx.x; i < vectors_per_cta;
         i += static_cast<std::size_t>(blockDim.x) * Unroll) {
      uint4 v[Unroll];
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        v[u] = __ldcg(p + i + static_cast<std::size_t>(u) * blockDim.x);  // L2, not L1
#pragma unroll
      for (int u = 0; u < Unroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  const std::uint64_t end = cta_stamp(wide_clock);
  if (acc == magic) sink[threadIdx.x] = acc;
  if (threadIdx.x == 0) write_record(records, start, end, vectors_per_cta * sizeof(uint4) * passes);
}

__global__ void chase_kernel(const std::uint32_t* chain, std::int64_t steps, std::uint32_t* sink,
                             CtaRecord* records, bool wide_clock) {
  if (threadIdx.x != 0) return;
  std::uint32_t x = 0;
  const std::uint64_t start = now(wide_clock);
  for (std::int64_t s = 0; s < steps; ++s) x = __ldcg(chain + x);  // L2 or DRAM, never L1
  const std::uint64_t end = now(wide_clock);
  sink[0] = x;
  write_record(records, start, end, static_cast<std::uint64_t>(steps));
}

__global__ void table_then_line_kernel(const std::uint32_t* table, const std::uint32_t* lines,
                                       std::int64_t steps, std::uint32_t* sink, CtaRecord* records,
                                       bool wide_clock) {
  if (threadIdx.x != 0) return;
  std::uint32_t next = 0;
  const std::uint64_t start = now(wide_clock);
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::uint32_t line = table[next];             // the block table entry
    next = lines[static_cast<std::size_t>(line) * 32];  // the K line it names
  }
  const std::uint64_t end = now(wide_clock);
  sink[0] = next;
  write_record(records, start, end, static_cast<std::uint64_t>(steps));
}

__global__ void spin_kernel(std::uint64_t cycles, std::uint64_t* sink) {
  const std::uint64_t start = clock64();
  std::uint64_t t = start;
  while (t - start < cycles) t = clock64();
  sink[0] = t;
}

__global__ void empty_kernel() {}

/// Device memory for `ctas` records; read() brings them back after the launch.
class Records {
 public:
  explicit Records(int ctas) : count_(static_cast<std::size_t>(ctas)), buffer_(count_ * sizeof(CtaRecord)) {
    check(cudaMemset(buffer_.get(), 0, buffer_.size()), "cudaMemset (probe records)");
  }
  CtaRecord* get() const { return static_cast<CtaRecord*>(buffer_.get()); }
  std::vector<CtaRecord> read(const char* kernel) const {
    check(cudaGetLastError(), kernel);
    check(cudaDeviceSynchronize(), kernel);
    std::vector<CtaRecord> r(count_);
    check(cudaMemcpy(r.data(), buffer_.get(), buffer_.size(), cudaMemcpyDeviceToHost),
          "cudaMemcpy (records)");
    return r;
  }

 private:
  std::size_t count_;
  DeviceBytes buffer_;
};

/// A scratch buffer the kernels write only if an impossible value comes out (so that the compiler
/// keeps their work).
DeviceBytes& sink() {
  static DeviceBytes s(64 * 1024);
  return s;
}
float* float_sink() { return static_cast<float*>(sink().get()); }
std::uint32_t* word_sink() { return static_cast<std::uint32_t*>(sink().get()); }

}  // namespace

DriverFacts query_driver() {
  DriverFacts f;
  int dev = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  f.name = prop.name;
  const auto attr = [dev](cudaDeviceAttr a) {
    int v = -1;
    return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : (cudaGetLastError(), -1);
  };
  f.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  f.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  f.num_sms = attr(cudaDevAttrMultiProcessorCount);
  f.warp_size = attr(cudaDevAttrWarpSize);
  f.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
  f.max_ctas_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
  f.max_threads_per_cta = attr(cudaDevAttrMaxThreadsPerBlock);
  f.registers_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
  f.shared_per_sm_bytes = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  f.max_shared_per_cta_bytes = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  f.shared_reserved_per_cta_bytes = attr(cudaDevAttrReservedSharedMemoryPerBlock);
  f.l2_size_bytes = attr(cudaDevAttrL2CacheSize);
  f.clock_khz = attr(cudaDevAttrClockRate);
  f.memory_clock_khz = attr(cudaDevAttrMemoryClockRate);
  f.memory_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  return f;
}

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  check(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cudaMalloc (probe buffer)");
}
DeviceBytes::~DeviceBytes() { cudaFree(ptr_); }
void DeviceBytes::upload(const void* host, std::size_t bytes) const {
  check(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (probe buffer)");
}

std::vector<CtaRecord> occupancy(int ctas, int threads, std::uint64_t spin_cycles, bool wide_clock) {
  Records r(ctas);
  occupancy_kernel<<<ctas, threads>>>(spin_cycles, r.get(), wide_clock);
  return r.read("occupancy probe");
}

std::vector<CtaRecord> dependent_fmas(std::int64_t fmas, bool wide_clock) {
  Records r(1);
  dependent_fma_kernel<<<1, 32>>>(fmas, 1.0001f, 0.5f, float_sink(), r.get(), wide_clock);
  return r.read("dependent-FMA probe");
}

std::vector<CtaRecord> fma_throughput(int ctas, int threads, std::int64_t iterations, bool wide_clock) {
  Records r(ctas);
  fma_throughput_kernel<<<ctas, threads>>>(iterations, 1.0001f, 0.5f, float_sink(), r.get(), wide_clock);
  return r.read("FMA-throughput probe");
}

std::vector<CtaRecord> mma_throughput(int ctas, int warps, std::int64_t iterations, bool wide_clock) {
  DeviceBytes tile(16 * 16 * sizeof(__half));
  check(cudaMemset(tile.get(), 0, tile.size()), "cudaMemset (mma tile)");
  Records r(ctas);
  mma_kernel<<<ctas, warps * 32>>>(static_cast<const __half*>(tile.get()), iterations, float_sink(), r.get(),
                                   wide_clock);
  return r.read("tensor-core probe");
}

std::vector<CtaRecord> issue_mix(int ctas, int threads, std::int64_t iterations, bool wide_clock) {
  DeviceBytes rows(4096);
  check(cudaMemset(rows.get(), 0x3c, rows.size()), "cudaMemset (issue-mix rows)");
  Records r(ctas);
  issue_mix_kernel<<<ctas, threads>>>(static_cast<const uint4*>(rows.get()), iterations, 0.5f, float_sink(),
                                      r.get(), wide_clock);
  return r.read("issue-mix probe");
}

std::vector<CtaRecord> stream_read(const DeviceBytes& buffer, std::size_t offset, std::size_t bytes_per_cta,
                                   int ctas, int threads, int unroll, int passes, bool wide_clock) {
  const auto* base = reinterpret_cast<const uint4*>(static_cast<const char*>(buffer.get()) + offset);
  const std::size_t vectors = bytes_per_cta / sizeof(uint4);
  Records r(ctas);
  const std::uint32_t magic = 0x9e3779b9u;
  switch (unroll) {
    case 1:
      stream_read_kernel<1>
          <<<ctas, threads>>>(base, vectors, passes, magic, word_sink(), r.get(), wide_clock);
      break;
    case 2:
      stream_read_kernel<2>
          <<<ctas, threads>>>(base, vectors, passes, magic, word_sink(), r.get(), wide_clock);
      break;
    case 4:
      stream_read_kernel<4>
          <<<ctas, threads>>>(base, vectors, passes, magic, word_sink(), r.get(), wide_clock);
      break;
    default:
      stream_read_kernel<8>
          <<<ctas, threads>>>(base, vectors, passes, magic, word_sink(), r.get(), wide_clock);
      break;
  }
  return r.read("stream-read probe");
}

std::vector<CtaRecord> pointer_chase(const DeviceBytes& chain, std::int64_t steps, bool wide_clock) {
  Records r(1);
  chase_kernel<<<1, 32>>>(static_cast<const std::uint32_t*>(chain.get()), steps, word_sink(), r.get(),
                          wide_clock);
  return r.read("pointer-chase probe");
}

std::vector<CtaRecord> table_then_line(const DeviceBytes& table, const DeviceBytes& lines, std::int64_t steps,
                                       bool wide_clock) {
  Records r(1);
  table_then_line_kernel<<<1, 32>>>(static_cast<const std::uint32_t*>(table.get()),
                                    static_cast<const std::uint32_t*>(lines.get()), steps, word_sink(),
                                    r.get(), wide_clock);
  return r.read("dependent-iteration probe");
}

namespace {

/// Milliseconds between two CUDA events around what `launch` enqueues.
template <typename Launch>
double event_ms(const char* what, Launch&& launch) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  check(cudaEventRecord(a), "cudaEventRecord");
  launch();
  check(cudaEventRecord(b), "cudaEventRecord");
  check(cudaEventSynchronize(b), what);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

}  // namespace

double spin_kernel_ms(std::uint64_t cycles) {
  auto* s = reinterpret_cast<std::uint64_t*>(sink().get());
  spin_kernel<<<1, 1>>>(1000, s);  // warm-up: the module is loaded, the clock is up
  return event_ms("clock probe", [&] { spin_kernel<<<1, 1>>>(cycles, s); });
}

double empty_kernels_ms(int launches, int ctas, int threads) {
  empty_kernel<<<ctas, threads>>>();
  check(cudaDeviceSynchronize(), "empty kernel");
  return event_ms("empty kernels", [&] {
    for (int i = 0; i < launches; ++i) empty_kernel<<<ctas, threads>>>();
  });
}

double launch_and_sync_us(int repeats) {
  std::vector<double> us;
  empty_kernel<<<1, 32>>>();
  check(cudaDeviceSynchronize(), "empty kernel");
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    empty_kernel<<<1, 32>>>();
    check(cudaStreamSynchronize(nullptr), "empty kernel");
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
  return us[us.size() / 2];
}

}  // namespace pao::cuda::probe

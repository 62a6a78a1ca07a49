// The probe's microbenchmarks, each one launch (or a few) on the current CUDA device. Kernels time
// themselves per CTA (probe_records.hpp); the launch-level ones use CUDA events and the host
// clock. Portable CUDA: sm_70 and up, nothing Hopper-only, and nothing GPGPU-Sim cannot run
// (%clock instead of %clock64 there: `wide_clock` false; tools/gpgpusim patches %smid).
// Errors throw pao::cuda::check::CudaError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "probe/probe_records.hpp"

namespace pao::cuda::probe {

/// What the driver says of the device (cudaDeviceGetAttribute); -1 where it gave no answer.
struct DriverFacts {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int num_sms = 0, warp_size = 0;
  int max_threads_per_sm = 0, max_ctas_per_sm = 0, max_threads_per_cta = 0;
  int registers_per_sm = 0;
  int shared_per_sm_bytes = 0, max_shared_per_cta_bytes = 0, shared_reserved_per_cta_bytes = -1;
  int l2_size_bytes = 0;
  int clock_khz = -1, memory_clock_khz = -1, memory_bus_bits = -1;
};
DriverFacts query_driver();

/// A device buffer, freed when it goes.
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes);
  ~DeviceBytes();
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  void upload(const void* host, std::size_t bytes) const;

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// `ctas` CTAs of `threads` threads; each holds its slot for `spin_cycles` (one thread spins, the
/// others wait at a barrier). Work: 1.
std::vector<CtaRecord> occupancy(int ctas, int threads, std::uint64_t spin_cycles, bool wide_clock);

/// One warp, a chain of `fmas` dependent fp32 FMAs per thread. Work: the FMAs of the chain.
std::vector<CtaRecord> dependent_fmas(std::int64_t fmas, bool wide_clock);

/// `ctas` x `threads`, 8 independent FMA chains per thread, `iterations` x 8 x 8 FMAs each.
/// Work: warp FMA instructions.
std::vector<CtaRecord> fma_throughput(int ctas, int threads, std::int64_t iterations, bool wide_clock);

/// Tensor cores: `ctas` x `warps` warps, each `iterations` x 4 independent wmma 16x16x16 f16
/// products into f32. Work: the products' flops (2 x 16^3 each).
std::vector<CtaRecord> mma_throughput(int ctas, int warps, std::int64_t iterations, bool wide_clock);

/// The decode kernels' inner loop as an instruction mix, on K rows that stay in L1: per
/// iteration a 16-byte load, 8 f16 -> f32 conversions, 8 FMAs, 2 butterfly shuffles, a max and 2
/// address operations (kIssueMixInstructions PTX instructions). Work: warp instructions.
inline constexpr int kIssueMixInstructions = 22;
std::vector<CtaRecord> issue_mix(int ctas, int threads, std::int64_t iterations, bool wide_clock);

/// Every CTA reads its own `bytes_per_cta` of `buffer` from `offset` on, `passes` times, through
/// L2 (ld.global.cg), each thread keeping `unroll` 16-byte loads in flight. Work: bytes read.
std::vector<CtaRecord> stream_read(const DeviceBytes& buffer, std::size_t offset, std::size_t bytes_per_cta,
                                   int ctas, int threads, int unroll, int passes, bool wide_clock);

/// One thread follows `steps` links of a chain through `chain` (u32 words: word w holds the
/// index of the next word): one dependent load per step. Work: steps.
std::vector<CtaRecord> pointer_chase(const DeviceBytes& chain, std::int64_t steps, bool wide_clock);

/// The decode loop's dependent iteration, one thread: a block-table entry (`table`, u32 line
/// indices; L1/L2 after first touch), then the K line it names (`lines`, 128-byte lines whose first
/// word is the next table index), `steps` times. Work: steps.
std::vector<CtaRecord> table_then_line(const DeviceBytes& table, const DeviceBytes& lines, std::int64_t steps,
                                       bool wide_clock);

/// One thread spins `cycles` clock cycles (clock64); the launch is timed with CUDA events.
/// Returns the events' milliseconds. Real GPUs only (a simulator's events count host time).
double spin_kernel_ms(std::uint64_t cycles);

/// `launches` empty kernels of `ctas` x `threads` back to back between two CUDA events;
/// milliseconds in all.
double empty_kernels_ms(int launches, int ctas, int threads);

/// Host time of one empty kernel launch and the synchronisation after it, microseconds; the
/// median of `repeats`.
double launch_and_sync_us(int repeats);

}  // namespace pao::cuda::probe

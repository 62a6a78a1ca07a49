// Minimal reproducers of the GPGPU-Sim 4.2 defects that pao's kernels met (docs/gpgpusim.md,
// "What the simulator gets wrong"). Each test pins one PTX instruction with inline assembly, runs
// it on inputs where a wrong implementation shows, and prints PASS or FAIL with the value
// expected by the PTX ISA and the value obtained. On a real GPU every test passes.
//
//   nvcc -arch=sm_75 --cudart shared -o gpgpusim-repro gpgpusim_repro.cu   (tools/gpgpusim/setup.sh)
//   tools/gpgpusim/run.sh -- build/gpgpusim/bin/gpgpusim-repro
//
// Exit status: 0 every test passes, 1 a test fails, 3 a CUDA error.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {

constexpr int kThreads = 64;  // two warps: the barrier reductions cross warps
constexpr int kBlocks = 2;    // two CTAs: a reduction must not leak from one CTA into the next

struct Results {
  float fma;                                 // fma.rn.f32
  float mul_add;                             // mul.rn.f32 then add.rn.f32 (two roundings, for contrast)
  unsigned short f16_tie_subnormal;          // cvt.rn.f16.f32 of 2^-25 (a tie: RNE gives 0x0000)
  unsigned short f16_tie_normal;             // cvt.rn.f16.f32 of 1 + 2^-11 (a tie: RNE gives 0x3c00)
  unsigned f16x2_mul;                        // mul.f16x2 of (1.5, 2) and (2, 3): (3, 6) = 0x46004200
  unsigned f16x2_add;                        // add.f16x2 of (1, 2) and (0.5, 0.25): (1.5, 2.25) = 0x40803e00
  unsigned or_all_false[kBlocks][kThreads];  // bar.red.or.pred, every thread false
  unsigned or_one_true[kBlocks][kThreads];   // bar.red.or.pred, thread 5 true
  unsigned or_all_false_again[kBlocks][kThreads];
  unsigned shfl_sum[kBlocks][kThreads];       // xor butterfly of the lane ids, shfl.sync.bfly.b32 d|p
  unsigned static_shared[kBlocks][kThreads];  // a static __shared__ array beside dynamic shared memory
};

extern __shared__ unsigned dynamic_shared[];

__device__ unsigned barrier_or(bool vote) {
  unsigned out;
  asm volatile(
      "{\n\t.reg .pred v, r;\n\t"
      "setp.ne.u32 v, %1, 0;\n\t"
      "bar.red.or.pred r, 0, v;\n\t"
      "selp.u32 %0, 1, 0, r;\n\t}"
      : "=r"(out)
      : "r"(static_cast<unsigned>(vote)));
  return out;
}

__device__ unsigned butterfly_sum(unsigned v) {
  for (int mask = 16; mask >= 1; mask /= 2) {
    unsigned other;
    // The predicate destination is what CUDA 12+ emits for __shfl_xor_sync.
    asm volatile(
        "{\n\t.reg .pred in_range;\n\t"
        "shfl.sync.bfly.b32 %0|in_range, %1, %2, 31, -1;\n\t}"
        : "=r"(other)
        : "r"(v), "r"(mask));
    v += other;
  }
  return v;
}

__global__ void repro(const float* in, const unsigned* in_bits, Results* r) {
  const int t = static_cast<int>(threadIdx.x), b = static_cast<int>(blockIdx.x);
  if (b == 0 && t == 0) {
    float d;
    asm volatile("fma.rn.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(in[0]), "f"(in[1]), "f"(in[2]));
    r->fma = d;
    float p, s;
    asm volatile("mul.rn.f32 %0, %1, %2;" : "=f"(p) : "f"(in[0]), "f"(in[1]));
    asm volatile("add.rn.f32 %0, %1, %2;" : "=f"(s) : "f"(p), "f"(in[2]));
    r->mul_add = s;
    unsigned short h;
    asm volatile("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(in[3]));
    r->f16_tie_subnormal = h;
    asm volatile("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(in[4]));
    r->f16_tie_normal = h;
    // Packed halves (vLLM's decode kernels multiply and add V with them): two lanes of f16 in a
    // 32-bit register, low half first. GPGPU-Sim's lexer reads .f16x2 as .f16 (its own TODO).
    unsigned x;
    asm volatile("mul.f16x2 %0, %1, %2;" : "=r"(x) : "r"(in_bits[0]), "r"(in_bits[1]));
    r->f16x2_mul = x;
    asm volatile("add.f16x2 %0, %1, %2;" : "=r"(x) : "r"(in_bits[2]), "r"(in_bits[3]));
    r->f16x2_add = x;
  }
  r->or_all_false[b][t] = barrier_or(false);
  r->or_one_true[b][t] = barrier_or(t == 5);
  r->or_all_false_again[b][t] = barrier_or(false);
  r->shfl_sum[b][t] = butterfly_sum(static_cast<unsigned>(t % 32));

  // CUDA places dynamic shared memory after the kernel's static shared variables: writing one
  // must not change the other.
  __shared__ unsigned static_array[kThreads];
  static_array[t] = static_cast<unsigned>(t);
  __syncthreads();
  dynamic_shared[t] = 1000u + static_cast<unsigned>(t);
  __syncthreads();
  r->static_shared[b][t] = static_array[t] - static_cast<unsigned>(t);  // 0 unless overwritten
}

int failures = 0;

void report(bool ok, const char* what, const char* expected, const char* got) {
  if (!ok) ++failures;
  std::printf("%s %-54s expected %-22s got %s\n", ok ? "PASS" : "FAIL", what, expected, got);
}

void report_float(const char* what, float expected, float got) {
  char e[48], g[48];
  std::snprintf(e, sizeof e, "%a", static_cast<double>(expected));
  std::snprintf(g, sizeof g, "%a", static_cast<double>(got));
  report(std::memcmp(&expected, &got, 4) == 0, what, e, g);
}

void report_code(const char* what, unsigned expected, unsigned got) {
  char e[48], g[48];
  std::snprintf(e, sizeof e, "0x%04x", expected);
  std::snprintf(g, sizeof g, "0x%04x", got);
  report(expected == got, what, e, g);
}

/// Every thread of every CTA must read `expected`.
void report_all(const char* what, const unsigned (&v)[kBlocks][kThreads], unsigned expected) {
  int wrong = 0, first_block = -1, first_thread = -1;
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t)
      if (v[b][t] != expected && wrong++ == 0) first_block = b, first_thread = t;
  char e[48], g[96];
  std::snprintf(e, sizeof e, "%u in every thread", expected);
  if (wrong == 0)
    std::snprintf(g, sizeof g, "%u in every thread", expected);
  else
    std::snprintf(g, sizeof g, "%d of %d threads wrong (CTA %d thread %d: %u)", wrong, kBlocks * kThreads,
                  first_block, first_thread, v[first_block][first_thread]);
  report(wrong == 0, what, e, g);
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("gpgpusim-repro: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  // a * b = 1 + 2^-11 + 2^-24 exactly: one rounding (fma) keeps the 2^-24, two roundings lose it.
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  const float in[5] = {a, a, c, 0x1p-25f, 1.0f + 0x1p-11f};
  // f16 pairs, low half first: (1.5, 2), (2, 3), (1, 2), (0.5, 0.25).
  const unsigned in_bits[4] = {0x40003e00u, 0x42004000u, 0x40003c00u, 0x34003800u};
  float* d_in = nullptr;
  unsigned* d_bits = nullptr;
  Results* d_r = nullptr;
  if (!cuda_ok(cudaMalloc(&d_in, sizeof in), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&d_bits, sizeof in_bits), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&d_r, sizeof(Results)), "cudaMalloc") ||
      !cuda_ok(cudaMemcpy(d_in, in, sizeof in, cudaMemcpyHostToDevice), "cudaMemcpy") ||
      !cuda_ok(cudaMemcpy(d_bits, in_bits, sizeof in_bits, cudaMemcpyHostToDevice), "cudaMemcpy"))
    return 3;
  repro<<<kBlocks, kThreads, kThreads * sizeof(unsigned)>>>(d_in, d_bits, d_r);
  Results r{};
  if (!cuda_ok(cudaGetLastError(), "launch") || !cuda_ok(cudaDeviceSynchronize(), "run") ||
      !cuda_ok(cudaMemcpy(&r, d_r, sizeof r, cudaMemcpyDeviceToHost), "cudaMemcpy"))
    return 3;
  report_float("fma.rn.f32 rounds once", 0x1p-24f, r.fma);
  report_float("mul.rn.f32 + add.rn.f32 round twice (contrast)", 0.0f, r.mul_add);
  report_code("cvt.rn.f16.f32 2^-25: a tie, to even", 0x0000, r.f16_tie_subnormal);
  report_code("cvt.rn.f16.f32 1 + 2^-11: a tie, to even", 0x3c00, r.f16_tie_normal);
  report_code("mul.f16x2 (1.5, 2) x (2, 3): both halves", 0x46004200u, r.f16x2_mul);
  report_code("add.f16x2 (1, 2) + (0.5, 0.25): both halves", 0x40803e00u, r.f16x2_add);
  report_all("bar.red.or.pred, every vote false", r.or_all_false, 0);
  report_all("bar.red.or.pred, thread 5 votes true", r.or_one_true, 1);
  report_all("bar.red.or.pred, every vote false again", r.or_all_false_again, 0);
  report_all("shfl.sync.bfly.b32 d|p: sum of lanes 0..31", r.shfl_sum, 496);
  report_all("dynamic shared memory leaves static __shared__ alone", r.static_shared, 0);
  return failures == 0 ? 0 : 1;
}

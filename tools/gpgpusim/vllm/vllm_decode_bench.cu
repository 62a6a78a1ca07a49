// One launch of vLLM's own paged-attention decode kernels (V1, or V2 and its reduce) for timing
// under GPGPU-Sim beside pao's (docs/gpgpusim.md, "vLLM's kernels under the simulator"). For
// measurement only: vLLM's kernels are compiled from a vLLM source tree outside this repository
// (tools/gpgpusim/vllm/build.sh --vllm DIR); nothing of vLLM's code is in pao. This file is the
// host side: the tensors, the launch geometry of vLLM's launchers (csrc/attention/
// paged_attention_v{1,2}.cu: grid (heads, seqs[, partitions]), NUM_THREADS threads, shared memory
// max(logits, outputs)) and a check of the output against a float64 reference on the host, since
// a simulator's result is never trusted alone.
//
//   vllm-decode-bench --kernel v1|v2:256|v2:512|v2:1024 --num-seqs S --seq-len L
//                     [--num-heads H] [--num-kv-heads G] [--timing-only]
//
// --timing-only prints the check but does not fail on it: under GPGPU-Sim vLLM's P·V is wrong
// because the simulator computes mul.f16x2 / add.f16x2 on the low half only (gpgpusim-repro shows
// it), while each still issues as one instruction, as on a GPU: the cycles stand, the values not.
//
// Compiled for head size 128, blocks of 16, f16 activations and cache, 128 threads (the timing
// grid's instance, data/cases/gpgpusim-timing.json). Exit status: 0 the output matches the
// reference (or --timing-only), 1 it does not, 2 bad arguments, 3 a CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention/attention_kernels.cuh"
#include "pao/numerics/formats.hpp"  // pao's f16 codec

namespace {

constexpr int kHeadSize = 128;
constexpr int kBlockSize = 16;
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
using Half = std::uint16_t;  // vLLM's scalar_t for f16 (its launchers pass uint16_t)

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "vllm-decode-bench: error: %s\nusage: vllm-decode-bench --kernel v1|v2:256|v2:512|v2:1024 "
               "--num-seqs S --seq-len L [--num-heads H] [--num-kv-heads G] [--timing-only]\n",
               message.c_str());
  std::exit(2);
}

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "vllm-decode-bench: CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  std::exit(3);
}

int parse_int(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1 || v > (1 << 24))
    usage_error(std::string(flag) + " " + text + ": expected a positive integer");
  return static_cast<int>(v);
}

/// k / 64 for k in [-64, 64]: exact in f16, so the host reference reads the values the kernel does.
Half small_half(int k) { return pao::encode_f16(k / 64.0); }

struct Lcg {
  std::uint64_t s;
  int next(int n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(n));
  }
};

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  // 16 bytes of slack: the allocations the committed rows were timed with (the pool's addresses
  // move GPGPU-Sim's cycles by about 0.5 %).
  check_cuda(cudaMalloc(&d, host.size() * sizeof(T) + 16), "cudaMalloc");
  check_cuda(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

template <int kPartition>
void launch_v2(Half* out, const Half* q, const Half* k, const Half* v, int num_heads, int num_kv_heads,
               int num_seqs, float scale, const int* tables, const int* lens, int columns, int max_seq_len,
               int q_stride, int block_stride, int head_stride, const float* k_scale, const float* v_scale) {
  const int partitions = (max_seq_len + kPartition - 1) / kPartition;
  float *exp_sums = nullptr, *max_logits = nullptr;
  Half* tmp_out = nullptr;
  const std::size_t stats = static_cast<std::size_t>(num_seqs) * num_heads * partitions;
  check_cuda(cudaMalloc(&exp_sums, stats * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&max_logits, stats * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&tmp_out, stats * kHeadSize * sizeof(Half)), "cudaMalloc");
  const int logits = kPartition * static_cast<int>(sizeof(float));
  const int outputs = (kWarps / 2) * kHeadSize * static_cast<int>(sizeof(float));
  const auto attention = &vllm::paged_attention_v2_kernel<Half, Half, kHeadSize, kBlockSize, kThreads,
                                                          vllm::Fp8KVCacheDataType::kAuto, false, kPartition>;
  attention<<<dim3(num_heads, num_seqs, partitions), kThreads, std::max(logits, outputs)>>>(
      exp_sums, max_logits, tmp_out, q, k, v, num_kv_heads, scale, tables, lens, columns, nullptr, q_stride,
      block_stride, head_stride, k_scale, v_scale, 0, 0, 0, 0, 0);
  check_cuda(cudaGetLastError(), "paged_attention_v2_kernel");
  const auto reduce = &vllm::paged_attention_v2_reduce_kernel<Half, kHeadSize, kThreads, kPartition>;
  const int reduce_smem = 2 * partitions * static_cast<int>(sizeof(float));
  reduce<<<dim3(num_heads, num_seqs), kThreads, reduce_smem>>>(out, exp_sums, max_logits, tmp_out, lens,
                                                               partitions);
  check_cuda(cudaGetLastError(), "paged_attention_v2_reduce_kernel");
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernel;
  bool timing_only = false;
  int num_seqs = 0, seq_len = 0, num_heads = 8, num_kv_heads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "vllm-decode-bench --kernel v1|v2:256|v2:512|v2:1024 --num-seqs S --seq-len L "
          "[--num-heads H] [--num-kv-heads G] [--timing-only]\n  vLLM's decode kernels (head 128, blocks of "
          "16, "
          "f16), one launch, checked against a float64 reference (--timing-only: reported, not judged).\n");
      return 0;
    }
    if (a == "--timing-only") {
      timing_only = true;
      continue;
    }
    if (i + 1 >= argc) usage_error(a + " needs a value");
    const char* value = argv[++i];
    if (a == "--kernel")
      kernel = value;
    else if (a == "--num-seqs")
      num_seqs = parse_int("--num-seqs", value);
    else if (a == "--seq-len")
      seq_len = parse_int("--seq-len", value);
    else if (a == "--num-heads")
      num_heads = parse_int("--num-heads", value);
    else if (a == "--num-kv-heads")
      num_kv_heads = parse_int("--num-kv-heads", value);
    else
      usage_error("unknown option '" + a + "'");
  }
  if (kernel.empty() || num_seqs == 0 || seq_len == 0)
    usage_error("--kernel, --num-seqs and --seq-len are needed");
  if (num_heads % num_kv_heads != 0) usage_error("--num-heads must be a multiple of --num-kv-heads");

  // Every sequence seq_len tokens; its blocks scattered over the pool by a fixed shuffle.
  const int columns = (seq_len + kBlockSize - 1) / kBlockSize;
  const int num_blocks = num_seqs * columns;
  Lcg rng{20261206};
  std::vector<int> tables(static_cast<std::size_t>(num_blocks));
  for (int i = 0; i < num_blocks; ++i) tables[static_cast<std::size_t>(i)] = i;
  for (int i = num_blocks - 1; i > 0; --i)
    std::swap(tables[static_cast<std::size_t>(i)], tables[static_cast<std::size_t>(rng.next(i + 1))]);
  const std::vector<int> lens(static_cast<std::size_t>(num_seqs), seq_len);

  // vLLM's cache layouts: K [blocks, kv_heads, head/x, block, x] (x = 16 bytes of f16: 8), V
  // [blocks, kv_heads, head, block]; q [seqs, heads, head].
  constexpr int x = 16 / static_cast<int>(sizeof(Half));
  const std::size_t cache_elems =
      static_cast<std::size_t>(num_blocks) * num_kv_heads * kHeadSize * kBlockSize;
  std::vector<Half> q(static_cast<std::size_t>(num_seqs) * num_heads * kHeadSize), k(cache_elems),
      v(cache_elems);
  for (auto& e : q) e = small_half(rng.next(129) - 64);
  for (auto& e : k) e = small_half(rng.next(129) - 64);
  for (auto& e : v) e = small_half(rng.next(129) - 64);
  const int head_stride = kHeadSize * kBlockSize, block_stride = num_kv_heads * head_stride;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadSize));
  const std::vector<float> one{1.0f};

  Half* d_q = device_copy(q);
  Half* d_k = device_copy(k);
  Half* d_v = device_copy(v);
  int* d_tables = device_copy(tables);
  int* d_lens = device_copy(lens);
  float* d_scale = device_copy(one);
  Half* d_out = nullptr;
  check_cuda(cudaMalloc(&d_out, q.size() * sizeof(Half)), "cudaMalloc");
  const int q_stride = num_heads * kHeadSize;

  if (kernel == "v1") {
    const int padded = columns * kBlockSize;
    const int logits = padded * static_cast<int>(sizeof(float));
    const int outputs = (kWarps / 2) * kHeadSize * static_cast<int>(sizeof(float));
    const auto attention = &vllm::paged_attention_v1_kernel<Half, Half, kHeadSize, kBlockSize, kThreads,
                                                            vllm::Fp8KVCacheDataType::kAuto, false>;
    attention<<<dim3(num_heads, num_seqs), kThreads, std::max(logits, outputs)>>>(
        d_out, d_q, d_k, d_v, num_kv_heads, scale, d_tables, d_lens, columns, nullptr, q_stride, block_stride,
        head_stride, d_scale, d_scale, 0, 0, 0, 0, 0);
    check_cuda(cudaGetLastError(), "paged_attention_v1_kernel");
  } else if (kernel == "v2:256") {
    launch_v2<256>(d_out, d_q, d_k, d_v, num_heads, num_kv_heads, num_seqs, scale, d_tables, d_lens, columns,
                   seq_len, q_stride, block_stride, head_stride, d_scale, d_scale);
  } else if (kernel == "v2:512") {
    launch_v2<512>(d_out, d_q, d_k, d_v, num_heads, num_kv_heads, num_seqs, scale, d_tables, d_lens, columns,
                   seq_len, q_stride, block_stride, head_stride, d_scale, d_scale);
  } else if (kernel == "v2:1024") {
    launch_v2<1024>(d_out, d_q, d_k, d_v, num_heads, num_kv_heads, num_seqs, scale, d_tables, d_lens, columns,
                    seq_len, q_stride, block_stride, head_stride, d_scale, d_scale);
  } else {
    usage_error("--kernel " + kernel + ": expected v1, v2:256, v2:512 or v2:1024");
  }
  check_cuda(cudaDeviceSynchronize(), "the launch");
  std::vector<Half> out(q.size());
  check_cuda(cudaMemcpy(out.data(), d_out, out.size() * sizeof(Half), cudaMemcpyDeviceToHost), "cudaMemcpy");

  // The float64 reference: softmax(q K^T * scale) V per (sequence, head).
  const int group = num_heads / num_kv_heads;
  double worst = 0;
  std::vector<double> logits(static_cast<std::size_t>(seq_len));
  for (int s = 0; s < num_seqs; ++s)
    for (int h = 0; h < num_heads; ++h) {
      const int g = h / group;
      const Half* qs = q.data() + (static_cast<std::size_t>(s) * num_heads + h) * kHeadSize;
      double m = -INFINITY;
      for (int t = 0; t < seq_len; ++t) {
        const std::size_t block =
            static_cast<std::size_t>(tables[static_cast<std::size_t>(s * columns + t / kBlockSize)]);
        double dot = 0;
        for (int d = 0; d < kHeadSize; ++d) {
          const std::size_t i = ((block * num_kv_heads + g) * (kHeadSize / x) + d / x) * kBlockSize * x +
                                static_cast<std::size_t>(t % kBlockSize) * x + d % x;
          dot += static_cast<double>(pao::decode_f16(qs[d])) * pao::decode_f16(k[i]);
        }
        logits[static_cast<std::size_t>(t)] = dot * scale;
        m = std::max(m, logits[static_cast<std::size_t>(t)]);
      }
      double sum = 0;
      for (auto& l : logits) sum += (l = std::exp(l - m));
      for (int d = 0; d < kHeadSize; ++d) {
        double acc = 0;
        for (int t = 0; t < seq_len; ++t) {
          const std::size_t block =
              static_cast<std::size_t>(tables[static_cast<std::size_t>(s * columns + t / kBlockSize)]);
          const std::size_t i = ((block * num_kv_heads + g) * kHeadSize + d) * kBlockSize +
                                static_cast<std::size_t>(t % kBlockSize);
          acc += logits[static_cast<std::size_t>(t)] * pao::decode_f16(v[i]);
        }
        const double got =
            pao::decode_f16(out[(static_cast<std::size_t>(s) * num_heads + h) * kHeadSize + d]);
        worst = std::max(worst, std::fabs(got - acc / sum));
      }
    }
  // f16 output of values in [-1, 1]: a few f16 ulps (2^-11 near 1) of rounding in the kernel's
  // products and sums; a wrong kernel (or a simulator defect) misses by far more.
  const bool ok = worst <= 4e-3;
  std::printf("vllm-decode-bench %s seqs %d len %d heads %d/%d: max |out - reference| %.3g: %s\n",
              kernel.c_str(), num_seqs, seq_len, num_heads, num_kv_heads, worst,
              ok            ? "PASS"
              : timing_only ? "not judged (--timing-only)"
                            : "FAIL");
  return ok || timing_only ? 0 : 1;
}

// The CUDA decode kernels: paged attention V1 / V2 (one template; V1 is one partition holding
// the whole sequence) and V2's reduce. They compute the oracle's kernel precision
// (docs/numerics.md, "Kernel precision") bit for bit: the same thread geometry as vLLM's CTA
// (warp 32, 128 threads, pao::DecodeGeometry), the same rounding points and reduction trees.
//
// How bit-exactness is kept:
//  - every fp32 operation is spelled out: __fmul_rn / __fadd_rn / __fsub_rn where the oracle
//    multiplies and adds separately, __fmaf_rn where it calls std::fma, __fdiv_rn for 1/x. The
//    targets are also compiled with --fmad=false, so that pao's shared PAO_HD math (kernel_exp,
//    kernel_tanh in pao/numerics/kernel_math.hpp, used as is) is not contracted either;
//  - cross-thread sums use __shfl_xor_sync butterflies: lane 0 of an xor butterfly holds exactly
//    the tree of pao::butterfly_sum (float addition commutes, each step adds lane i + mask to i);
//  - conversions: decoding is exact (hardware f16 -> f32, pao's bf16 and fp8 decoders); rounding
//    to f16 / bf16 is one round-to-nearest-even (__float2half_rn / __float2bfloat16_rn), the
//    oracle's round_to_activation. The f16 P·V adds round an fp32 sum to f16, as the oracle does
//    (equal to a native f16 add: 24 >= 2 * 11 + 2).
// Only NaN payloads may differ from the CPU (hardware conversions make canonical NaNs).
#pragma once

#if !defined(PAO_CUDA_EMULATION)  // the CPU tests compile this file as host code (emulation/)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/decode_kernel_args.hpp"
#include "pao/core/dtype.hpp"
#include "pao/cuda/decode_cta.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/kernels/logits.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/dtype_codec.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kernel_math.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "pao/plan/partition.hpp"

// `#pragma unroll` for device code only (host compilers warn about it).
#define PAO_PRAGMA_TEXT(x) #x
#if defined(__CUDA_ARCH__)
#define PAO_UNROLL _Pragma("unroll")
#define PAO_UNROLL_BY(n) _Pragma(PAO_PRAGMA_TEXT(unroll n))  // n: a constant expression
#else
#define PAO_UNROLL
#define PAO_UNROLL_BY(n)
#endif

namespace pao::cuda::detail {

#if !defined(PAO_CUDA_EMULATION)
/// The CTA's dynamic shared memory (16-byte aligned).
__device__ __forceinline__ float* dynamic_shared_memory() {
  extern __shared__ float4 pao_dynamic_shared_memory[];
  return reinterpret_cast<float*>(pao_dynamic_shared_memory);
}
#endif

// ---- elements ------------------------------------------------------------------------------

/// Storage type of a dtype: its codec's bits (pao/numerics/dtype_codec.hpp).
template <DType T>
struct Elem {
  using type = typename DTypeCodec<T>::Bits;
};

/// The exact value of an element: its codec's decode (f16 by the hardware conversion: the same
/// value, one instruction).
template <DType T>
__device__ __forceinline__ float to_float(typename Elem<T>::type v) {
  if constexpr (T == DType::f16)
    return __half2float(__ushort_as_half(v));
  else
    return static_cast<float>(DTypeCodec<T>::decode(v));
}

/// One round-to-nearest-even of x to an activation dtype (f16 / bf16 overflow to inf).
template <DType T>
__device__ __forceinline__ typename Elem<T>::type from_float(float x) {
  if constexpr (T == DType::f32)
    return x;
  else if constexpr (T == DType::f16)
    return __half_as_ushort(__float2half_rn(x));
  else
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

/// The value x takes when stored as T (the oracle's round_to_activation).
template <DType T>
__device__ __forceinline__ float round_to(float x) {
  if constexpr (T == DType::f32)
    return x;
  else
    return to_float<T>(from_float<T>(x));
}

/// A cache element as the kernel uses it: the activation value itself, or for fp8
/// round_to_activation(float(fp8) * scale) (vLLM's scaled_convert: fp32 product, one rounding),
/// rounded to half instead when THROUGH_HALF (f32 activations in vectors of 2+:
/// fp8_dequant_through_half in decode_geometry.hpp).
template <DType Q, DType C, bool THROUGH_HALF = false>
__device__ __forceinline__ float cache_value(typename Elem<C>::type bits, float scale) {
  if constexpr (C == Q)
    return to_float<Q>(bits);
  else if constexpr (THROUGH_HALF)
    return round_to<DType::f16>(__fmul_rn(to_float<C>(bits), scale));
  else
    return round_to<Q>(__fmul_rn(to_float<C>(bits), scale));
}

/// One scale or zero point of an integer cache (f32 or f16 on the device; decoded exactly).
__device__ __forceinline__ float quant_param(const void* params, DType dtype, std::int64_t offset) {
  if (dtype == DType::f16) return to_float<DType::f16>(static_cast<const std::uint16_t*>(params)[offset]);
  return static_cast<const float*>(params)[offset];
}

/// An integer cache's element (block, head, token in block, dim) as the kernel uses it:
/// round_to_activation((code - zero_point) * scale) in f32 (the oracle's dequantise_kernel, then
/// its activation rounding).
template <DType Q>
__device__ __forceinline__ float integer_cache_value(float code, const QuantTensorParams& q,
                                                     std::int64_t block, int head, int token, int dim) {
  const std::int64_t o = q.layout.offset(block, head, token, dim);
  return round_to<Q>(pao::dequantise_kernel(code, quant_param(q.scale, q.scale_dtype, o),
                                            quant_param(q.zero_point, q.zero_point_dtype, o)));
}

template <int Bytes>
struct RawVector;
template <>
struct RawVector<16> {
  using type = uint4;
};
template <>
struct RawVector<8> {
  using type = uint2;
};
template <>
struct RawVector<4> {
  using type = unsigned int;
};
template <>
struct RawVector<2> {
  using type = unsigned short;
};
template <>
struct RawVector<1> {
  using type = unsigned char;
};

template <typename T, int N>
using RawVectorOf = typename RawVector<static_cast<int>(sizeof(T)) * N>::type;

/// Elements (block, head, token + t * token_step, dim + t * dim_step), t in [0, N), of a cache
/// whose layout does not allow one vector load: element by element through
/// PagedCacheLayout::offset. Out of line, so that this rarely taken path costs the kernels
/// neither code size nor registers.
template <typename T, int N>
__device__ __noinline__ RawVectorOf<T, N> gather(const T* cache, const PagedCacheLayout layout,
                                                 std::int64_t block, int head, int token, int dim,
                                                 int token_step, int dim_step) {
  T v[N];
  PAO_UNROLL
  for (int t = 0; t < N; ++t)
    v[t] = cache[layout.offset(block, head, token + t * token_step, dim + t * dim_step)];
  RawVectorOf<T, N> raw;
  memcpy(&raw, v, sizeof raw);
  return raw;
}

/// N elements of a cache starting at (block, head, token, dim), along dims (K) or tokens (V):
/// one aligned vector load at `offset` (= layout.offset(block, head, token, dim), which the caller
/// builds from its hoisted parts, below) when the launcher found the layout allows it, else
/// gather().
template <typename T, int N>
__device__ __forceinline__ void load_cache(const T* cache, const PagedCacheLayout& layout, bool vector,
                                           std::int64_t offset, std::int64_t block, int head, int token,
                                           int dim, bool along_tokens, T (&out)[N]) {
  RawVectorOf<T, N> raw;
  if (vector)
    raw = *reinterpret_cast<const RawVectorOf<T, N>*>(cache + offset);
  else
    raw = gather<T, N>(cache, layout, block, head, token, dim, along_tokens ? 1 : 0, along_tokens ? 0 : 1);
  memcpy(out, &raw, sizeof raw);
}

/// N floats of shared memory at `src`, 16-byte aligned when N is a multiple of 4: vector loads
/// (LDS.128) then, one per element otherwise.
template <int N>
__device__ __forceinline__ void load_shared_floats(const float* src, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
#if defined(PAO_CUDA_EMULATION)
    memcpy(out, src, sizeof out);
#else
    PAO_UNROLL
    for (int i = 0; i < N / 4; ++i) {
      const uint4 raw = reinterpret_cast<const uint4*>(src)[i];
      memcpy(out + 4 * i, &raw, sizeof raw);
    }
#endif
  } else {
    PAO_UNROLL
    for (int j = 0; j < N; ++j) out[j] = src[j];
  }
}

// PagedCacheLayout::offset taken apart for the token loops, where it was the kernels' main
// instruction cost (docs/cuda.md, "Where the instructions go"): offset(block, head, token, dim) =
// block * block_stride + (head * head_stride + token * token_stride) + dims[dim], the head and
// token part fixed for a thread (computed once), the dim part (a division by x) computed once per
// CTA into shared memory, the block part once per block. The same integers as offset(): the same
// loads.

// ---- reductions ----------------------------------------------------------------------------

constexpr unsigned kFullMask = 0xffffffffu;

/// Sum over groups of `Lanes` consecutive lanes by xor butterfly; every lane of a group ends with
/// lane 0's value, pao::butterfly_sum's tree.
template <int Lanes>
__device__ __forceinline__ float butterfly_sum(float v) {
  PAO_UNROLL
  for (int mask = Lanes / 2; mask >= 1; mask /= 2) v = __fadd_rn(v, __shfl_xor_sync(kFullMask, v, mask));
  return v;
}

template <int Lanes>
__device__ __forceinline__ float butterfly_max(float v) {
  PAO_UNROLL
  for (int mask = Lanes / 2; mask >= 1; mask /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, mask));
  return v;
}

/// vLLM's block_sum: a butterfly over each warp, lane 0's sums through shared memory, a
/// butterfly over the warps, lane 0's result broadcast. `red` holds NumWarps floats.
template <int NumWarps>
__device__ __forceinline__ float block_sum(float* red, float v) {
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  v = butterfly_sum<kWarpSize>(v);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < NumWarps ? red[lane] : 0.0f;
  v = butterfly_sum<NumWarps>(v);
  return __shfl_sync(kFullMask, v, 0);
}

/// The maximum over the CTA (fmaxf is exact, so the tree does not matter).
template <int NumWarps>
__device__ __forceinline__ float block_max(float* red, float v) {
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  v = butterfly_max<kWarpSize>(v);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < NumWarps ? red[lane] : -FLT_MAX;
  v = butterfly_max<NumWarps>(v);
  return __shfl_sync(kFullMask, v, 0);
}

// ---- P·V -----------------------------------------------------------------------------------

/// vLLM's dot(logits_vec, v_vec) over VV tokens (probabilities p already rounded to Q):
///   f32:  products in fp32, summed left to right;
///   bf16: products rounded to bf16, adjacent pairs summed in fp32, pair sums left to right;
///   f16:  products rounded to f16; even and odd tokens accumulated separately in f16; then
///         float(even) + float(odd).
template <DType Q, int VV>
__device__ __forceinline__ float pv_dot(const float (&p)[VV], const float (&v)[VV]) {
  if constexpr (Q == DType::f32) {
    float dot = __fmul_rn(p[0], v[0]);
    PAO_UNROLL
    for (int t = 1; t < VV; ++t) dot = __fadd_rn(dot, __fmul_rn(p[t], v[t]));
    return dot;
  } else if constexpr (Q == DType::bf16) {
    static_assert(VV % 2 == 0);
    float dot = 0.0f;
    PAO_UNROLL
    for (int t = 0; t < VV; t += 2) {
      const float pair =
          __fadd_rn(round_to<Q>(__fmul_rn(p[t], v[t])), round_to<Q>(__fmul_rn(p[t + 1], v[t + 1])));
      dot = t == 0 ? pair : __fadd_rn(dot, pair);
    }
    return dot;
  } else {
    static_assert(VV % 2 == 0);
    float even = round_to<Q>(__fmul_rn(p[0], v[0]));
    float odd = round_to<Q>(__fmul_rn(p[1], v[1]));
    PAO_UNROLL
    for (int t = 2; t < VV; t += 2) {
      even = round_to<Q>(__fadd_rn(even, round_to<Q>(__fmul_rn(p[t], v[t]))));
      odd = round_to<Q>(__fadd_rn(odd, round_to<Q>(__fmul_rn(p[t + 1], v[t + 1]))));
    }
    return __fadd_rn(even, odd);
  }
}

/// pv_dot's f16 rule on an f16 cache, in the hardware's f16 arithmetic: __hmul_rn and __hadd_rn
/// round once each, the roundings the fp32 spelling above makes with round_to (a product of two
/// f16 values is exact in fp32; a sum of two, rounded to fp32 first, rounds to the same f16:
/// 24 >= 2 * 11 + 2). Two instructions a token instead of six.
template <int VV>
__device__ __forceinline__ float pv_dot_f16(const __half (&p)[VV], const __half (&v)[VV]) {
  static_assert(VV % 2 == 0);
  __half even = __hmul_rn(p[0], v[0]);
  __half odd = __hmul_rn(p[1], v[1]);
  PAO_UNROLL
  for (int t = 2; t < VV; t += 2) {
    even = __hadd_rn(even, __hmul_rn(p[t], v[t]));
    odd = __hadd_rn(odd, __hmul_rn(p[t + 1], v[t + 1]));
  }
  return __fadd_rn(__half2float(even), __half2float(odd));
}

// ---- the attention kernel ------------------------------------------------------------------

/// One CTA per (head = blockIdx.x, seq = blockIdx.y, partition = blockIdx.z): the oracle's
/// run_partition_kernel for one query head. V1 (partition_size 0) writes `out`; V2 writes its
/// partition's tmp_out, max_logits and exp_sums. A CTA with no tokens (seq_len 0, or a V2
/// partition at or past the sequence's end) writes 0 / -inf / 0, the oracle's contract.
///
/// Dynamic shared memory (the plan's attention_shared_bytes): the partition's logits, later the
/// cross-warp output scratch [(num_warps / 2) * HS].
template <int HS, int BS, DType Q, DType C>
__global__ void __launch_bounds__(kThreadsPerCta) decode_attention_kernel(const DecodeKernelArgs args) {
  using QElem = typename Elem<Q>::type;
  using CElem = typename Elem<C>::type;
  constexpr DecodeGeometry G =
      DecodeGeometry::make(kWarpSize, kThreadsPerCta, BS, static_cast<std::int32_t>(sizeof(QElem)));
  constexpr int NT = G.num_threads, NW = G.num_warps;
  constexpr int TG = G.thread_group_size, VEC = G.vec_size, DPS = G.dims_per_step;
  constexpr int NUM_VECS = HS / DPS;
  constexpr int VV = G.v_vec_size, NVR = G.v_vecs_per_row, ROWS_PER_ITER = G.rows_per_iter;
  constexpr int ROWS_PER_THREAD = ceil_div(HS, ROWS_PER_ITER);
  static_assert(HS % DPS == 0, "head size must be a multiple of thread_group_size * vec_size");
  static_assert(TG * BS == kWarpSize, "one token per thread group, one block per warp step");
  static_assert(NW >= 1 && (NW & (NW - 1)) == 0);

  const DecodeParams& p = args.p;
  const int head = static_cast<int>(blockIdx.x);
  const int seq = static_cast<int>(blockIdx.y);
  const int partition = static_cast<int>(blockIdx.z);
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / kWarpSize;
  const int lane = tid % kWarpSize;
  const bool v2 = args.partition_size > 0;

  const int seq_len = p.seq_lens[seq];
  const IndexRange tokens = partition_tokens(seq_len, args.partition_size, partition);
  const std::int64_t row = static_cast<std::int64_t>(seq) * p.num_heads + head;
  const std::int64_t part_row = row * args.max_num_partitions + partition;
  QElem* const out =
      v2 ? static_cast<QElem*>(p.tmp_out) + part_row * HS : static_cast<QElem*>(p.out) + row * HS;

  const int num_tokens = tokens.size();
  if (num_tokens <= 0 || num_tokens > args.logits_capacity) {
    // Empty: out 0, max -inf, sum 0. Over capacity (a device seq_len beyond the planned
    // max_seq_len): NaN everywhere, never a silent wrong answer.
    const float fill = num_tokens <= 0 ? 0.0f : __int_as_float(0x7fc00000);
    for (int d = tid; d < HS; d += NT) out[d] = from_float<Q>(fill);
    if (v2 && tid == 0) {
      p.max_logits[part_row] = num_tokens <= 0 ? -INFINITY : fill;
      p.exp_sums[part_row] = fill;
    }
    return;
  }

  float* const shared = dynamic_shared_memory();
  __shared__ float q_s[HS];
  __shared__ float red_max[NW];
  __shared__ float red_sum[NW];
  __shared__ std::int64_t k_dims[HS], v_dims[HS];  // the dim parts of the cache offsets (load_cache)

  const int kv_head = p.kv_head_of(head);
  {
    const QElem* q =
        static_cast<const QElem*>(p.query) + seq * p.query_seq_stride + head * p.query_head_stride;
    for (int d = tid; d < HS; d += NT) {
      q_s[d] = to_float<Q>(q[d * p.query_dim_stride]);
      k_dims[d] = p.key_layout.offset(0, 0, 0, d);
      v_dims[d] = p.value_layout.offset(0, 0, 0, d);
    }
  }
  __syncthreads();

  constexpr bool kInteger = kQkCacheInteger<C>;
  constexpr bool kFp8 = kQkCacheFp8<C>;
  static_assert(kQkCacheElementBytes<C> == sizeof(CElem), "the dtype table's size of the cache element");
  constexpr int kQkBatch = qk_batch_vectors(G, HS, qk_cache_of<C>());  // K vectors at once; 0: unrolled 4x
  const float k_scale = kFp8 ? (p.k_head_scales ? p.k_head_scales[kv_head] : p.k_scale) : 1.0f;
  const float v_scale = kFp8 ? (p.v_head_scales ? p.v_head_scales[kv_head] : p.v_scale) : 1.0f;
  const LogitParams logits = logit_params(p, head);
  const IndexRange blocks = blocks_of_tokens(tokens, BS);  // a partition starts on a block boundary
  const int first_block = blocks.begin, last_block = blocks.end - 1;
  const std::int32_t* const table = p.block_tables + seq * p.block_table_stride;
  const CElem* const k_cache = static_cast<const CElem*>(p.key_cache);
  const CElem* const v_cache = static_cast<const CElem*>(p.value_cache);

  // ---- Q·K: warp w takes blocks w, w + NW, ...; thread group g of a warp takes token g of the
  // block; lane o of the group holds dims j * DPS + o * VEC + [0, VEC) of every step j.
  const int group = lane / TG;
  const int group_lane = lane % TG;
  const std::int64_t k_row = kv_head * p.key_layout.head_stride + group * p.key_layout.token_stride;
  float qk_max = -FLT_MAX;
  bool visible = false;
  // The loop twice, for vector loads and for the element gather (a layout that allows no vector
  // load), so that the choice is made once, not at every load.
  const auto qk_blocks = [&](auto vector_loads) {
    for (int b = first_block + warp; b <= last_block; b += NW) {
      const std::int64_t physical = table[b];
      const std::int64_t k_block = physical * p.key_layout.block_stride + k_row;
      float acc[VEC];
      if constexpr (kQkBatch > 0) {  // step 0's products set them; zeroed for the host compiler's
        PAO_UNROLL                   // flow analysis, which cannot see step 0 in the batch loop
            for (int l = 0; l < VEC; ++l) acc[l] = 0.0f;
      }
      // K vector j (dims j * DPS + group_lane * VEC + [0, VEC)) into the running products.
      const auto product = [&](int j, const CElem(&k)[VEC]) {
        const int dim0 = j * DPS + group_lane * VEC;
        PAO_UNROLL
        for (int l = 0; l < VEC; ++l) {
          const float kf = kInteger ? integer_cache_value<Q>(to_float<C>(k[l]), p.key_quant, physical,
                                                             kv_head, group, dim0 + l)
                                    : cache_value<Q, C, fp8_dequant_through_half(Q, VEC)>(k[l], k_scale);
          acc[l] = j == 0 ? __fmul_rn(q_s[dim0 + l], kf) : __fmaf_rn(q_s[dim0 + l], kf, acc[l]);
        }
      };
      const auto load_k = [&](int j, CElem(&k)[VEC]) {
        const int dim0 = j * DPS + group_lane * VEC;
        load_cache<CElem, VEC>(k_cache, p.key_layout, decltype(vector_loads)::value, k_block + k_dims[dim0],
                               physical, kv_head, group, dim0, false, k);
      };
      if constexpr (kQkBatch > 0) {
        // Vectors of up to 4 elements in batches (qk_batch_vectors): one, unrolled whole, up to 16
        // vectors (vLLM's loop; unrolled 4 times it took 604 instead of 510 instructions per block
        // at head size 128, f16), beyond that batches of up to 128 bytes of K (docs/cuda.md, "Cut
        // 7" and "Cut 8"). Every K vector of a batch is loaded before the batch's first product,
        // vLLM's order, so that a warp waits once a batch, not once a step, whether ptxas
        // schedules the loads (a GPU) or the PTX runs as written (GPGPU-Sim); the products keep
        // their order: bit-identical. (Vectors of 8 in one batch of 16 held q and K in 160 to 254
        // registers: see the branch below.)
        PAO_UNROLL_BY(1)
        for (int j0 = 0; j0 < NUM_VECS; j0 += kQkBatch) {
          CElem k[kQkBatch][VEC];
          PAO_UNROLL
          for (int i = 0; i < kQkBatch; ++i)
            if (NUM_VECS % kQkBatch == 0 || j0 + i < NUM_VECS) load_k(j0 + i, k[i]);
          PAO_UNROLL
          for (int i = 0; i < kQkBatch; ++i)
            if (NUM_VECS % kQkBatch == 0 || j0 + i < NUM_VECS) product(j0 + i, k[i]);
        }
      } else {
        // Vectors of 8 and integer caches (a dequantisation per element): unrolled 4 times, each
        // load beside its use: registers and code size.
        PAO_UNROLL_BY(kQkUnroll)
        for (int j = 0; j < NUM_VECS; ++j) {
          CElem k[VEC];
          load_k(j, k);
          product(j, k);
        }
      }
      float dot = acc[0];
      PAO_UNROLL
      for (int l = 1; l < VEC; ++l) dot = __fadd_rn(dot, acc[l]);
      dot = butterfly_sum<TG>(dot);

      const int token = b * BS + group;
      if (group_lane == 0 && token < tokens.end) {
        const float logit = decode_logit(dot, logits, token, seq_len);
        shared[token - tokens.begin] = logit;
        if (logit != -INFINITY) {  // masked tokens take no part in the max (a NaN does, and loses)
          visible = true;
          qk_max = fmaxf(qk_max, logit);
        }
      }
    }
  };
  if (args.key_vector_loads)
    qk_blocks(std::true_type{});
  else
    qk_blocks(std::false_type{});
  qk_max = block_max<NW>(red_max, qk_max);
  const bool any_visible = __syncthreads_or(visible) != 0;

  // ---- softmax: thread t owns tokens t, t + NT, ... of the partition (in order).
  float partial = 0.0f;
  for (int i = tid; i < num_tokens; i += NT) {
    const float e = pao::kernel_exp(__fsub_rn(shared[i], qk_max));
    shared[i] = e;
    partial = __fadd_rn(partial, e);
  }
  const float exp_sum = block_sum<NW>(red_sum, partial);
  const float inv_sum = __fdiv_rn(1.0f, __fadd_rn(exp_sum, 1e-6f));
  for (int i = tid; i < num_tokens; i += NT) shared[i] = round_to<Q>(__fmul_rn(shared[i], inv_sum));
  if (v2 && tid == 0) {
    p.max_logits[part_row] = any_visible ? qk_max : -INFINITY;
    p.exp_sums[part_row] = exp_sum;
  }
  __syncthreads();

  // ---- P·V: warp w takes blocks w, w + NW, ...; lanes r * NVR + [0, NVR) share rows
  // r + i * ROWS_PER_ITER, lane vector pv covering tokens pv * VV + [0, VV) of the block.
  // Tokens past the partition's end have p = 0 and V = 0 (NaN poison there cannot leak).
  const int pv = lane % NVR;
  const int row0 = lane / NVR;
  const std::int64_t v_row = kv_head * p.value_layout.head_stride + pv * VV * p.value_layout.token_stride;
  float acc[ROWS_PER_THREAD];
  PAO_UNROLL
  for (int i = 0; i < ROWS_PER_THREAD; ++i) acc[i] = 0.0f;
  // A block the partition holds whole (every block but its last, unless the partition ends on
  // a block boundary) uses its p and V as loaded: the masking of the last block's tokens past the
  // end was the identity there, and cost each full block its compares and selects. The same
  // values either way: bit-identical.
  const auto pv_block = [&](int b, auto vector_loads, auto whole_block) {
    constexpr bool kWhole = decltype(whole_block)::value;
    const std::int64_t physical = table[b];
    const std::int64_t v_block = physical * p.value_layout.block_stride + v_row;
    const int tok0 = b * BS + pv * VV;
    const auto in_range = [&](int j) { return kWhole || tok0 + j < tokens.end; };
    float prob[VV];
    if constexpr (kWhole) {
      load_shared_floats<VV>(shared + (tok0 - tokens.begin), prob);  // a partition starts on a block
    } else {
      PAO_UNROLL
      for (int j = 0; j < VV; ++j) prob[j] = in_range(j) ? shared[tok0 + j - tokens.begin] : 0.0f;
    }
    constexpr bool kHalfDot = Q == DType::f16 && C == DType::f16;  // pv_dot_f16
    [[maybe_unused]] __half prob_h[VV];
    if constexpr (kHalfDot) {
      PAO_UNROLL
      for (int j = 0; j < VV; ++j) prob_h[j] = __float2half_rn(prob[j]);  // exact: already rounded to f16
    }
    PAO_UNROLL
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
      const int r = row0 + i * ROWS_PER_ITER;
      if (HS % ROWS_PER_ITER != 0 && r >= HS) continue;
      CElem v[VV];
      load_cache<CElem, VV>(v_cache, p.value_layout, decltype(vector_loads)::value, v_block + v_dims[r],
                            physical, kv_head, pv * VV, r, true, v);
      if constexpr (kHalfDot) {
        __half v_h[VV];
        PAO_UNROLL
        for (int j = 0; j < VV; ++j) v_h[j] = __ushort_as_half(in_range(j) ? v[j] : std::uint16_t{0});
        acc[i] = __fadd_rn(acc[i], pv_dot_f16<VV>(prob_h, v_h));
      } else {
        float vf[VV];
        PAO_UNROLL
        for (int j = 0; j < VV; ++j) {
          if (!in_range(j))
            vf[j] = 0.0f;
          else if constexpr (kInteger)
            vf[j] =
                integer_cache_value<Q>(to_float<C>(v[j]), p.value_quant, physical, kv_head, pv * VV + j, r);
          else
            vf[j] = cache_value<Q, C, fp8_dequant_through_half(Q, VV)>(v[j], v_scale);
        }
        acc[i] = __fadd_rn(acc[i], pv_dot<Q, VV>(prob, vf));
      }
    }
  };
  const auto pv_blocks = [&](auto vector_loads) {  // twice, as qk_blocks
    for (int b = first_block + warp; b <= last_block; b += NW) {
      if ((b + 1) * BS <= tokens.end)  // the same for the whole warp
        pv_block(b, vector_loads, std::true_type{});
      else
        pv_block(b, vector_loads, std::false_type{});
    }
  };
  if (args.value_vector_loads)
    pv_blocks(std::true_type{});
  else
    pv_blocks(std::false_type{});
  PAO_UNROLL
  for (int i = 0; i < ROWS_PER_THREAD; ++i) acc[i] = butterfly_sum<NVR>(acc[i]);

  // ---- across warps: vLLM's halving loop (warp i < mid adds warp i + mid), the same tree as a
  // butterfly over warps. The logits are dead: the shared buffer becomes the scratch.
  __syncthreads();
  float* const scratch = shared;
  PAO_UNROLL
  for (int width = NW; width > 1; width /= 2) {
    const int mid = width / 2;
    if (warp >= mid && warp < width && pv == 0) {
      PAO_UNROLL
      for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        const int r = row0 + i * ROWS_PER_ITER;
        if (r < HS) scratch[(warp - mid) * HS + r] = acc[i];
      }
    }
    __syncthreads();
    if (warp < mid && pv == 0) {
      PAO_UNROLL
      for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        const int r = row0 + i * ROWS_PER_ITER;
        if (r < HS) acc[i] = __fadd_rn(acc[i], scratch[warp * HS + r]);
      }
    }
    __syncthreads();
  }
  if (warp == 0 && pv == 0) {
    PAO_UNROLL
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
      const int r = row0 + i * ROWS_PER_ITER;
      if (r < HS) out[r] = from_float<Q>(acc[i]);
    }
  }
}

// ---- V2's reduce ---------------------------------------------------------------------------

/// One CTA per (head = blockIdx.x, seq = blockIdx.y): merges the ceil(seq_len / partition_size)
/// partitions of the sequence (the oracle's reduce_kernel). None: out 0. One: a copy. Otherwise
/// M = max of max_logits, r_j = exp_sums_j * kernel_exp(max_j - M), their block_sum S,
/// out = sum_j fma(tmp_j * r_j, 1 / (S + 1e-6), acc) in partition order. Reads the stored
/// (rounded) tmp_out. Dynamic shared memory: 2 * max_num_partitions floats.
template <DType Q>
__global__ void __launch_bounds__(kThreadsPerCta) decode_reduce_kernel(const DecodeKernelArgs args) {
  using QElem = typename Elem<Q>::type;
  constexpr int NT = kThreadsPerCta, NW = kThreadsPerCta / kWarpSize;
  const DecodeParams& p = args.p;
  const int head = static_cast<int>(blockIdx.x);
  const int seq = static_cast<int>(blockIdx.y);
  const int tid = static_cast<int>(threadIdx.x);
  const int hs = p.head_size;
  const int P = args.max_num_partitions;
  const int n = partitions_of_sequence(p.seq_lens[seq], args.partition_size);
  const std::int64_t row = static_cast<std::int64_t>(seq) * p.num_heads + head;
  QElem* const out = static_cast<QElem*>(p.out) + row * hs;
  const QElem* const tmp = static_cast<const QElem*>(p.tmp_out) + row * P * hs;
  const float* const max_logits = p.max_logits + row * P;
  const float* const exp_sums = p.exp_sums + row * P;

  if (n <= 0 || n > P) {  // n > P: a device seq_len beyond the planned max_seq_len
    const float fill = n <= 0 ? 0.0f : __int_as_float(0x7fc00000);
    for (int d = tid; d < hs; d += NT) out[d] = from_float<Q>(fill);
    return;
  }
  if (n == 1) {
    for (int d = tid; d < hs; d += NT) out[d] = from_float<Q>(to_float<Q>(tmp[d]));
    return;
  }

  float* const shared = dynamic_shared_memory();
  float* const max_s = shared;
  float* const rescaled_s = shared + P;
  __shared__ float red_max[NW];
  __shared__ float red_sum[NW];

  float m = -FLT_MAX;
  for (int j = tid; j < n; j += NT) {
    max_s[j] = max_logits[j];
    m = fmaxf(m, max_s[j]);
  }
  m = block_max<NW>(red_max, m);  // its __syncthreads also publishes max_s

  float partial = 0.0f;
  for (int j = tid; j < n; j += NT) {
    const float r = __fmul_rn(exp_sums[j], pao::kernel_exp(__fsub_rn(max_s[j], m)));
    rescaled_s[j] = r;
    partial = __fadd_rn(partial, r);
  }
  const float total = block_sum<NW>(red_sum, partial);  // publishes rescaled_s
  const float inv = __fdiv_rn(1.0f, __fadd_rn(total, 1e-6f));
  for (int d = tid; d < hs; d += NT) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j)
      acc = __fmaf_rn(__fmul_rn(to_float<Q>(tmp[static_cast<std::int64_t>(j) * hs + d]), rescaled_s[j]), inv,
                      acc);
    out[d] = from_float<Q>(acc);
  }
}

}  // namespace pao::cuda::detail

// A case's tensors, built from its seed the way vLLM's tests and a serving engine lay them out:
// random values, a shared pool of KV blocks handed out as a random permutation (non-contiguous
// block tables), NaN poison in every cache slot no sequence uses, garbage in block-table entries
// past a sequence's last block. Decode caches are filled directly; prefix caches are written with
// pao::reshape_and_cache (the context, and by default the new tokens), quantised to fp8 where the
// cache is fp8. Tests, `pao golden`, pao-cuda-check and the benchmarks all build cases here.
#pragma once

#include <cstdint>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"

namespace pao::cases {

/// An integer cache's scales and zero points (pao/numerics/kv_quant.hpp), under the golden's names
/// key_cache_scale, key_cache_zero_point, value_cache_scale, value_cache_zero_point; empty tensors
/// for every other cache.
struct QuantParamTensors {
  Tensor key_scale, key_zero_point, value_scale, value_zero_point;

  Tensor& param(CacheTensor t, bool zero_point) {
    if (t == CacheTensor::key) return zero_point ? key_zero_point : key_scale;
    return zero_point ? value_zero_point : value_scale;
  }
  const Tensor& param(CacheTensor t, bool zero_point) const {
    return const_cast<QuantParamTensors*>(this)->param(t, zero_point);
  }
  /// The kernels' view of them with `spec`.
  KVQuantArgs views(const KVQuant& spec) const;
  /// A copy of every tensor that is there (a cache write's params before it).
  QuantParamTensors copy() const;
};

struct DecodeCase {
  Case spec;
  Tensor query;             // [num_seqs, num_heads, head_size]
  Tensor key_cache;         // cache_shape(spec.kv_layout, key, ...)
  Tensor value_cache;       // cache_shape(spec.kv_layout, value, ...)
  Tensor block_tables;      // [num_seqs, max_blocks_per_seq] i32
  Tensor seq_lens;          // [num_seqs] i32
  Tensor alibi_slopes;      // [num_heads] f32, with spec.alibi
  QuantParamTensors quant;  // integer caches

  /// Views onto this case's tensors (valid while the case lives). The kernels take the case's
  /// tuning beside them: paged_attention_v2(c.args(), precision, c.spec).
  DecodeArgs args() const;
};

struct PrefixCase {
  Case spec;
  Tensor query;       // [num_tokens, num_heads, head_size]
  Tensor key, value;  // [num_tokens, num_kv_heads, head_size]
  Tensor key_cache, value_cache, block_tables, seq_lens;
  Tensor query_start_loc;   // [num_seqs + 1] i32
  Tensor alibi_slopes;      // [num_heads] f32, with spec.alibi
  Tensor slot_mapping;      // [num_tokens] i64: the slot of every new token
  QuantParamTensors quant;  // integer caches

  /// Views onto this case's tensors (valid while the case lives).
  PrefixArgs args() const;
};

/// The cache write of a prefix step (kernel reshape_and_cache): the caches as the context left
/// them (the new tokens' slots NaN-poisoned), the new tokens plus padding_tokens rows with slot -1,
/// and the caches after vLLM's reshape_and_cache wrote them.
struct ReshapeCase {
  Case spec;
  Tensor key, value;    // [num_tokens + padding_tokens, num_kv_heads, head_size], spec.dtype
  Tensor slot_mapping;  // [num_tokens + padding_tokens] i64; the padding rows -1
  Tensor key_cache_before, value_cache_before;  // cache_shape(spec.kv_layout, ...)
  Tensor key_cache, value_cache;                // after the write
  Tensor block_tables, seq_lens;                // where each sequence's slots are
  QuantParamTensors quant_before, quant;        // an integer cache's scales and zero points, before and after
};

/// The fused cache write and attention of a prefix step (kernel write_and_attend, OpenVINO's
/// PagedAttention): the caches as the context left them (the new tokens' slots poisoned), and the
/// prefix step after the new tokens' write (step's key_cache, value_cache and quant: the caches
/// after, which its attention reads).
struct WriteAndAttendCase {
  PrefixCase step;
  Tensor key_cache_before, value_cache_before;
  QuantParamTensors quant_before;  // integer caches
};

/// Throws pao::Error for a case of the other kernel or with inconsistent lengths.
DecodeCase make_decode_case(const Case& c);
PrefixCase make_prefix_case(const Case& c);
ReshapeCase make_reshape_case(const Case& c);
WriteAndAttendCase make_write_and_attend_case(const Case& c);

/// A prefix step's new tokens (key, value) written into its caches at slot_mapping with
/// pao::reshape_and_cache (an integer cache's scales and zero points too): what
/// make_write_and_attend_case and a golden's recomputation both do.
void write_new_tokens(PrefixCase& step);

/// The blocks of a case's paged pool: num_blocks when the case gives it, else the blocks its
/// sequences need plus one spare per sequence.
std::int32_t pool_num_blocks(const Case& c);

/// The attention options of a case: scale, fp8 scales (per tensor or per KV head), soft-cap,
/// window, the ALiBi slopes when the case has them, an integer cache's scales and zero points.
AttentionOptions attention_options(const Case& c, const Tensor& alibi_slopes,
                                   const QuantParamTensors& quant = {});

/// ALiBi slopes of the Press et al. recipe for num_heads (geometric, 2^(-8/n) based).
std::vector<float> alibi_slopes_for(std::int32_t num_heads);

}  // namespace pao::cases

// The paged KV cache of one kernel call, validated: cache shapes and dtypes, the layouts as
// strides, a contiguous host copy of block_tables, per-KV-head scales, and the attention scalars.
// Shared by the decode and prefix kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"
#include "pao/kernels/logits.hpp"
#include "pao/layout/paged_cache_layout.hpp"

namespace pao::detail {

/// An integer cache tensor's scales and zero points, decoded to f32 (exactly: they are f32 or f16),
/// and where each (block, head, token, dim)'s live.
struct IntegerDequant {
  QuantParamLayout layout;
  std::vector<float> scale, zero_point;
  DType code_dtype = DType::u8;
  std::int32_t bits = 8;                    // 4: u4 codes (0..15), one per byte
  QuantRule rule = QuantRule::minmax_zero;  // openvino: fractional zero points
};

struct PagedKV {
  std::int32_t num_blocks = 0, num_kv_heads = 0, head_size = 0, block_size = 0;
  std::int32_t max_blocks_per_seq = 0;
  DType cache_dtype = DType::f32;
  const std::byte* key_data = nullptr;
  const std::byte* value_data = nullptr;
  PagedCacheLayout key_layout, value_layout;
  std::vector<std::int32_t> block_tables;  // [num_seqs * max_blocks_per_seq]
  std::vector<float> k_scales, v_scales;   // [num_kv_heads]; 1 unless the cache is fp8
  IntegerDequant key_quant, value_quant;   // integer caches only (`integer`)
  bool integer = false;

  /// The scales and zero points of `tensor` of an integer cache, else nullptr.
  const IntegerDequant* integer_dequant(CacheTensor tensor) const {
    if (!integer) return nullptr;
    return tensor == CacheTensor::key ? &key_quant : &value_quant;
  }

  const std::int32_t* block_table(std::int32_t seq) const {
    return block_tables.data() + static_cast<std::size_t>(seq) * max_blocks_per_seq;
  }
  /// Checks that `seq_len` tokens fit seq's row of block_tables and that every block they use
  /// is a valid block id; for an integer cache, that every scale they use is finite and positive
  /// and every zero point an integer of the code range. Entries past the last used block are
  /// never read and not checked.
  void check_sequence(std::int32_t seq, std::int32_t seq_len) const;
  /// The integer-cache part of it for the first `num_tokens` tokens of seq (blocks checked).
  void check_quant_params(std::int32_t seq, std::int32_t num_tokens) const;
};

/// `num_seqs`, `num_kv_heads`... are inferred from the caches and checked against the query's.
PagedKV make_paged_kv(const TensorView& key_cache, const TensorView& value_cache, KVLayout layout,
                      const TensorView& block_tables, std::int32_t num_seqs, std::int32_t num_kv_heads,
                      std::int32_t head_size, DType activation_dtype, const AttentionOptions& options);
/// The same for a kernel call's arguments (num_kv_heads from the cache).
inline PagedKV make_paged_kv(const PagedKVArgs& a, std::int32_t num_seqs, std::int32_t num_kv_heads,
                             std::int32_t head_size, DType activation_dtype) {
  return make_paged_kv(a.key_cache, a.value_cache, a.kv_layout, a.block_tables, num_seqs, num_kv_heads,
                       head_size, activation_dtype, a.options);
}

/// Scale, soft-cap, sliding window and ALiBi slopes, checked.
struct AttentionScalars {
  float scale = 1.0f;
  float soft_cap = 0.0f;
  std::int32_t sliding_window = 0;
  std::vector<float> alibi_slopes;  // [num_heads] or empty
};
AttentionScalars make_scalars(const AttentionOptions& options, std::int32_t num_heads,
                              std::int32_t head_size);
/// The logit scalars of query head `head` (pao/kernels/logits.hpp).
LogitParams logit_params(const AttentionScalars& s, std::int32_t head);

/// The i32 vector of a rank-1 tensor named `name`, checked to have `expected` entries.
std::vector<std::int32_t> read_i32_vector(const TensorView& t, const char* name, std::int64_t expected);
/// What a decode and a prefix problem both hold: the checked query, the paged KV cache and the
/// attention scalars.
struct AttentionProblem {
  std::int32_t num_heads = 0, head_size = 0;
  DType dtype = DType::f32;  // query / out
  TensorView query;
  PagedKV kv;
  AttentionScalars scalars;

  std::int32_t queries_per_kv() const { return num_heads / kv.num_kv_heads; }
  /// Checks `query` [rows, num_heads, head_size] (`shape_doc` names its dims) in an activation
  /// dtype and takes it; returns its rows.
  std::int32_t take_query(const TensorView& query, const char* shape_doc);
};

/// Checks rank, sizes (-1 = any) and, if given, dtype of `t`.
void check_tensor(const TensorView& t, const char* name, std::initializer_list<std::int64_t> shape,
                  const char* shape_doc);
void check_tensor(const TensorView& t, const char* name, std::span<const std::int64_t> shape,
                  const char* shape_doc);

}  // namespace pao::detail

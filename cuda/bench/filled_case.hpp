// A benchmark case filled on the device at memory speed: under the `constant` distribution every
// query, K and V element is 1/16 (make_decode_case draws nothing), so the device writes each
// tensor as one element's bytes repeated and the host holds only what is small — block tables,
// lengths, ALiBi slopes. The block tables are make_decode_case's / make_prefix_case's own (the
// same seed, the same stream). Cache slots no token uses hold 1/16 rather than NaN poison: the
// benchmark times, it does not judge. Plain C++: the CPU tests compare a fill with the host case.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/kernels/attention_options.hpp"

namespace pao::cuda::bench {

/// A tensor the device fills: `shape` of `dtype`, every element the bytes of `pattern`
/// (little-endian, dtype_size(dtype) of them).
struct FilledTensor {
  DType dtype = DType::f16;
  Shape shape;
  std::uint32_t pattern = 0;
  std::size_t nbytes() const;
};

struct FilledDecodeCase {
  cases::Case spec;
  FilledTensor query;                   // [num_seqs, num_heads, head_size]
  FilledTensor key_cache, value_cache;  // cache_shape(spec.kv_layout, ...)
  Tensor block_tables, seq_lens;        // as make_decode_case's
  Tensor alibi_slopes;                  // [num_heads] f32, with spec.alibi
  AttentionOptions options() const;     // valid while the case lives
};

struct FilledPrefixCase {
  cases::Case spec;
  FilledTensor query;                   // [num_tokens, num_heads, head_size]
  FilledTensor key, value;              // [num_tokens, num_kv_heads, head_size]
  FilledTensor key_cache, value_cache;  // context and new tokens alike
  Tensor block_tables, seq_lens;        // as make_prefix_case's
  Tensor alibi_slopes;
  AttentionOptions options() const;
};

/// Whether `c` can be filled on the device: the constant distribution, a float or fp8 cache (an
/// integer cache's codes depend on scales drawn per block), one fp8 scale for every KV head.
bool fills_on_device(const cases::Case& c);

/// Throws pao::Error when !fills_on_device(c) or the case is inconsistent.
FilledDecodeCase make_filled_decode_case(const cases::Case& c);
FilledPrefixCase make_filled_prefix_case(const cases::Case& c);

/// The tensor a fill writes, on the host: what the tests compare with make_decode_case's.
Tensor materialize(const FilledTensor& t);

}  // namespace pao::cuda::bench

// The integer caches of generated cases (make_decode_case, make_prefix_case): the scale and
// zero-point tensors, poisoned until written, and the write of a block's tokens, quantised as
// kv_quant says (pao/numerics/kv_quant.hpp). A block's tokens are quantised together, once: a
// by_channel block's scales span them.
#pragma once

#include <cstdint>

#include "pao/cases/case.hpp"
#include "pao/cases/case_tensors.hpp"

namespace pao::detail {

/// The poison of an integer cache's slots no token occupies: the codes are qmax (a finite value:
/// an integer holds no NaN), the scales of their own (by_token, group) NaN; with poison_unused
/// false, codes 0 with scale 1 and zero point 0 (the value 0), in a by_channel block the code
/// nearest its zero point (the value 0 where that is an integer of the range: rule minmax_zero).
double integer_cache_poison_code(const cases::Case& c);

/// The four param tensors of a pool of `num_blocks` blocks, every scale poisoned (NaN) unless the
/// case has poison_unused false (1); zero points 0.
cases::QuantParamTensors make_quant_params(const cases::Case& c, std::int32_t num_blocks);

/// Quantises the rows [n][head_size] (values as the activation dtype holds them) of the tokens in
/// slots [0, n) of (block, head) of `which` into `cache` (laid out as `layout`) and its params.
void write_integer_block(const cases::Case& c, CacheTensor which, Tensor& cache,
                         const PagedCacheLayout& layout, cases::QuantParamTensors& params, std::int64_t block,
                         std::int32_t head, const float* rows, std::int32_t n);

}  // namespace pao::detail

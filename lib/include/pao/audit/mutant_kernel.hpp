// A vendor kernel written independently of pao's oracle: plain fp32 loops over a golden's inputs
// (vLLM's rounding points: fp8 and integer caches dequantised through the activation dtype,
// probabilities rounded to
// it before P·V unless kept in fp32, tmp_out and out rounded once), decode through V2's partitions
// and reduce, prefix in one pass. One of the bugs kernels really have can be switched on, so that
// `pao audit` measures what `pao diff` catches on bugs computed for real, not on perturbed goldens;
// with no bug, its variants (fp32 probabilities, fused multiply-adds, vLLM's 1e-6 guard dropped)
// are legitimate implementations that must pass.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::audit {

enum class Bug : std::uint8_t {
  none,
  last_token_dropped,             // attends tokens [0, seq_len - 1)
  window_plus_one,                // sliding window one token too wide
  window_minus_one,               // ... one token too narrow
  causal_off_by_one,              // prefix: a query also sees the next new token
  alibi_sign_flipped,             // bias -slope * distance
  alibi_missing,                  // no bias
  k_scale_ignored,                // fp8 K dequantised without k_scale
  v_scale_ignored,                // fp8 V dequantised without v_scale
  softmax_scale_log2e,            // exp2's log2(e) folded into the scale, then exp used
  gqa_head_mapping,               // kv head = head % num_kv_heads instead of head / group
  block_table_off_by_one,         // logical block b read from block_tables[s][b + 1]
  partition_boundary_off_by_one,  // V2: every partition also takes the next partition's first token
  reduce_without_max_rescaling,   // V2 reduce weights exp_sums without exp(max_logit - max)
  partials_swapped,               // V2: tmp_out of partitions 0 and 1 written to each other's slot
  fp8_other_format,               // fp8 cache decoded as the other fp8 format
  nan_leak,                       // P·V runs over the last block's unused slots with p = 0 (0 * NaN)
  partial_block_dropped,  // decode: seq_len / block_size blocks read (floor): a partly filled last block lost
  zero_point_ignored,     // integer cache dequantised as code * scale
  quant_params_of_neighbour,  // integer cache: the scale / zero point of the next token (by_token,
                              // group) or the next channel (by_channel), an index off by one
  integer_sign_confused,      // u8 codes read as i8 or i8 as u8
  u4_nibbles_swapped,         // u4: the two codes of a byte exchanged (dims 2i and 2i + 1)
};

struct MutantOptions {
  Bug bug = Bug::none;
  bool fp32_probabilities = false;  // vLLM rounds p to the activation dtype before P·V
  bool fma = false;                 // fused multiply-adds in the dot products
  bool guard = true;                // vLLM's 1 / (exp_sum + 1e-6)
};

/// The outputs a vendor would hand to `pao diff`, under vLLM's names: decode `out`, `tmp_out`,
/// `max_logits`, `exp_sums`; prefix `out`. `golden` supplies the inputs (make_golden's tensors).
std::vector<std::pair<std::string, Tensor>> run_mutant(const cases::Case& c,
                                                       const golden::GoldenTensors& golden,
                                                       const MutantOptions& options);

}  // namespace pao::audit

// How one output tensor of a vendor is judged (docs/golden.md, "Policies" and "The default rule"):
//   flash        max|actual - exact| <= k * max|kernel - exact| + floor   (FlashAttention's rule;
//                exact = the golden's out_exact in F64 (partials: the exact V2's, rounded once),
//                kernel = the oracle's kernel-precision output; floor defaults to
//                (2u + 1e-6) * max|exact|, u the dtype's unit roundoff), and the same per row
//                (local), and the errors' NMSE and mean ULP against the oracle's (distributional)
//   elementwise  |actual - expected| <= atol + rtol * |expected| for every element (torch's
//                assert_close defaults per dtype), expected = the golden's own tensor
//   nmse         sum (actual - expected)^2 / sum expected^2 <= nmse
//   bitwise      every element equal to the golden's own tensor bit for bit (any NaN equals any
//                NaN): a port of the oracle's arithmetic (pao's CUDA kernels against the kernel
//                precision), and reshape_and_cache's written caches (always: a cache write has no
//                legitimate rounding freedom)
// Under every rule a NaN or Inf where the golden is finite fails. Default: flash with k = 2, local
// and distributional, for every output. `--policy NAME:key=value,...` overrides any of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/core/dtype.hpp"
#include "pao/numerics/ulp.hpp"  // unit_roundoff

namespace pao::diff {

enum class Rule : std::uint8_t { flash, elementwise, nmse, bitwise };
std::string to_string(Rule rule);

struct Policy {
  Rule rule = Rule::flash;
  double k = 2.0;
  std::optional<double> floor;  // unset: (2u + 1e-6) * max|exact|
  // flash: the local criterion (every (seq, head) row against its own kernel error and floor) and
  // the distributional ones (NMSE and mean ULP error against the oracle's, per tensor and per row;
  // a row allows 16x the NMSE factor plus u^2, 4x the ULP factor plus 1). docs/golden.md derives them.
  bool local = true;
  bool distributional = true;
  double nmse_factor = 4.0;  // NMSE <= nmse_factor * the oracle's + u^2 / 4
  double ulp_factor = 2.0;   // mean ulp <= ulp_factor * the oracle's + 0.25
  double atol = 1e-5;
  double rtol = 1.3e-6;
  double nmse = 1e-6;
};

/// torch.testing.assert_close's (atol, rtol) for a dtype: f16 (1e-5, 1e-3), bf16 (1e-5, 1.6e-2),
/// f32 (1e-5, 1.3e-6), f64 (1e-7, 1e-7); fp8 and integers use f32's.
std::pair<double, double> torch_tolerances(DType dtype);

/// The default policy of a (canonical) output name; `golden_dtype` is the golden tensor's dtype.
Policy default_policy(std::string_view tensor, DType golden_dtype);

/// One --policy argument: "NAME:key=value[,key=value...]", NAME an output name or "*" (every
/// tensor); keys rule (flash|elementwise|nmse|bitwise), k, floor, local (0|1), distributional (0|1), atol,
/// rtol, nmse. Without `rule`, k and
/// floor select flash, atol and rtol elementwise, nmse nmse. A "*" override whose rule is only
/// implied by flash or elementwise keys tunes the tensors already under that rule ("*:k=3" leaves
/// the V2 partials alone); an explicit rule, or nmse, applies to every tensor.
struct PolicyOverride {
  std::string tensor;
  std::optional<Rule> rule;
  bool rule_explicit = false;
  std::optional<double> k, floor, atol, rtol, nmse;
  std::optional<bool> local, distributional;
};
/// Throws pao::Error naming the argument and the problem: an unknown tensor name (with the names
/// and a suggestion; vLLM's tmp_out, max_logits, exp_sums and output are aliases), key or value.
PolicyOverride parse_policy_override(std::string_view text);
/// The names a --policy may name: "*", the outputs, and the --reduce check.
const std::vector<std::string>& policy_tensor_names();

/// `base` with every override for `tensor` (or "*") applied, in order.
Policy apply_overrides(Policy base, std::string_view tensor, const std::vector<PolicyOverride>& overrides);

/// "flash: max|a - exact| <= 2 x kernel error + floor", "elementwise: |a - e| <= 1e-05 + 0.001 |e|", ...
std::string describe(const Policy& policy);

}  // namespace pao::diff

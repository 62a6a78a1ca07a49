// What a failing final output matches instead: the oracle's exact output recomputed from the
// golden's own tensors with one convention changed — the fp8 scales ignored (k, v or both), the
// sliding window ignored or off by one, ALiBi or the soft-cap ignored, the new tokens of an fp8
// prefix read from the other source. A vendor that made that choice lands within the same bound
// the tensor failed; pao diff then names it ("matches: v_scale ignored") instead of "scattered".
// Also: a constant ratio between actual and expected (uniform x4.0). (The causes read from
// where the failing rows lie, the window's edge among them, are diff/structure.hpp's.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pao/core/tensor.hpp"
#include "pao/diff/compare.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::diff {

/// A name for the failure of `report` (a final output: out, v1.out, v2.out, prefix.out) of the
/// golden `g`, whose vendor tensor is `actual`; nullopt when no hypothesis explains it.
std::optional<Verdict> diagnose_output(const golden::GoldenTensors& g, const TensorReport& report,
                                       const Tensor& actual);

/// The ratio r when actual = r * expected on nearly every element of weight (|expected| >= 5% of
/// max|expected|: 90% within 2% of the median ratio) and r is not 1 (by more than 5%).
std::optional<double> uniform_ratio(const std::vector<double>& actual, const std::vector<double>& expected);
/// uniform_ratio as a verdict ("actual = 4 x expected ..."); any flash-rule tensor, partials too.
std::optional<Verdict> uniform_ratio_verdict(const std::vector<double>& actual,
                                             const std::vector<double>& expected);

}  // namespace pao::diff

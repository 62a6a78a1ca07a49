// A kind with a typed case of its own (private to kinds/): its golden is the typed case's inputs
// (its list in pao/kinds/golden_tensor_lists.hpp) followed by the outputs computed from them, and a
// golden's missing outputs are computed from the inputs read back through the same list. decode
// and prefix are such kinds; write_and_attend re-runs its write from the golden's caches before,
// and reshape_and_cache's golden must hold its outputs, so they build their own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kinds/kind_helpers.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::kinds::detail {

/// `Base` (KernelKind, PrefixStepKind) with build_golden and compute_outputs_as from the typed
/// case `C`: `Make` seeds it from a case, `Inputs` names its tensors, `Outputs` computes the
/// outputs asked for.
template <typename Base, typename C, const auto& Inputs, C (*Make)(const cases::Case&),
          NamedTensors (*Outputs)(const C&, const std::vector<std::string>&)>
class TypedKind : public Base {
 public:
  using Base::Base;

  void build_golden(const cases::Case& c, const std::vector<std::string>& outputs,
                    golden::GoldenTensors& g) const override {
    C seeded = Make(c);
    add_golden_tensors(c, seeded, Inputs, Outputs(seeded, outputs), g.tensors);
  }

  NamedTensors compute_outputs_as(const cases::Case& c, const golden::GoldenTensors& g,
                                  const std::vector<std::string>& names) const override {
    C typed;
    typed.spec = c;  // the golden's inputs with the tuning or options of `c`
    read_tensors(typed, Inputs, [&](std::string_view name) { return golden::input_copy(g, name); });
    return Outputs(typed, names);
  }
};

}  // namespace pao::kinds::detail

// Error histograms in ULPs of the output dtype: how far each element is from its reference, in
// units of the spacing of the dtype's values at the reference. A correctly rounded output is
// within 0.5 ulp of the exact one; pao's kernel precision stays within a few.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pao/core/dtype.hpp"
#include "pao/numerics/ulp.hpp"  // ulp_of

namespace pao::diff {

struct UlpHistogram {
  /// Bin labels: "0", "<=0.5", "<=1", "<=2", "<=4", "<=16", "<=256", ">256", "nan/inf".
  static const std::vector<std::string>& labels();

  std::vector<std::int64_t> counts = std::vector<std::int64_t>(labels().size(), 0);

  /// Adds one element: its error in ulps (NaN or inf for a non-finite actual value).
  void add(double error_ulps);
};

}  // namespace pao::diff

// ULP error histograms (pao/diff/histogram.hpp).
#include "pao/diff/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace pao::diff {

const std::vector<std::string>& UlpHistogram::labels() {
  static const std::vector<std::string> l = {"0",    "<=0.5", "<=1",  "<=2",    "<=4",
                                             "<=16", "<=256", ">256", "nan/inf"};
  return l;
}

void UlpHistogram::add(double u) {
  static const double kEdges[] = {0, 0.5, 1, 2, 4, 16, 256};
  if (!std::isfinite(u)) {
    ++counts[8];
    return;
  }
  for (std::size_t b = 0; b < 7; ++b) {
    if (u <= kEdges[b]) {
      ++counts[b];
      return;
    }
  }
  ++counts[7];
}

}  // namespace pao::diff

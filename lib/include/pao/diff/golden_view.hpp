// A golden opened for diffing: its tensors read on demand (outputs the file leaves out, `pao golden
// --outputs`, recomputed from its inputs), their values as doubles, and the exact V2's partials,
// computed the first time a partial is judged. All of it is kept for every diff against the same
// view — `pao audit` diffs one golden against each of its mutations, side by side: a view may be
// shared between threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/golden/reader.hpp"

namespace pao::diff {

class GoldenView {
 public:
  /// Throws pao::Error if `file` is not a pao golden.
  explicit GoldenView(golden::TensorFile file);

  const golden::TensorFile& file() const { return file_; }
  const cases::Case& golden_case() const { return case_; }

  /// A tensor of the golden; throws pao::Error naming the file if it has none of that name.
  const Tensor& tensor(const std::string& name) const;
  /// Whether `name` was left out of the file and recomputed.
  bool recomputed(const std::string& name) const;
  const std::vector<double>& values(const std::string& name) const;
  /// The exact V2's partials ("v2.tmp_out", "v2.max_logits", "v2.exp_sums"), each rounded once.
  const std::vector<double>& exact_partial(const std::string& name) const;

 private:
  /// Every output the file leaves out, computed from its inputs once; false if `name` is not one.
  bool recompute_outputs(const std::string& name) const;
  const Tensor& tensor_locked(const std::string& name) const;

  golden::TensorFile file_;
  cases::Case case_;
  // Filled on demand under mutex_; std::map nodes stay put, so references handed out stay valid.
  mutable std::recursive_mutex mutex_;
  mutable std::set<std::string> recomputed_;
  mutable std::map<std::string, Tensor> tensors_;
  mutable std::map<std::string, std::vector<double>> values_;
  mutable std::map<std::string, std::vector<double>> exact_partials_;
};

}  // namespace pao::diff

// A golden opened for diffing (pao/diff/golden_view.hpp).
#include "pao/diff/golden_view.hpp"

#include <algorithm>

#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/paged_attention.hpp"

namespace pao::diff {

GoldenView::GoldenView(golden::TensorFile file)
    : file_(std::move(file)), case_(golden::golden_case_of(file_)) {}

const Tensor& GoldenView::tensor(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return tensor_locked(name);
}

const Tensor& GoldenView::tensor_locked(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second;
  if (!file_.has(name) && recompute_outputs(name)) return tensors_.at(name);
  require(file_.has(name), file_.path().string(), ": the golden has no tensor '", name, "'");
  return tensors_.emplace(name, file_.read(name)).first->second;
}

bool GoldenView::recomputed(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return recomputed_.count(name) > 0;
}

const std::vector<double>& GoldenView::values(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  return values_.emplace(name, tensor_locked(name).to_f64()).first->second;
}

const std::vector<double>& GoldenView::exact_partial(const std::string& name) const {
  std::lock_guard lock(mutex_);
  if (exact_partials_.empty()) {
    cases::DecodeCase dc = golden::decode_case_of(golden::read_golden(file_));
    dc.spec = case_;
    const DecodeOutputs o = paged_attention_v2(dc.args(), Precision::exact, case_);
    exact_partials_["v2.tmp_out"] = o.tmp_out.to_f64();
    exact_partials_["v2.max_logits"] = o.max_logits.to_f64();
    exact_partials_["v2.exp_sums"] = o.exp_sums.to_f64();
  }
  return exact_partials_.at(name);
}

bool GoldenView::recompute_outputs(const std::string& name) const {
  const auto& outputs = golden::golden_output_names(case_.kernel);
  if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) return false;
  const golden::GoldenTensors stored = golden::read_golden(file_, false);
  for (auto& [n, t] : golden::compute_outputs(stored, golden::missing_outputs(stored))) {
    recomputed_.insert(n);
    tensors_.insert_or_assign(n, std::move(t));
  }
  return tensors_.count(name) > 0;
}

}  // namespace pao::diff

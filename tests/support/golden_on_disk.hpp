// A case's golden made and written to a scratch folder, and a vendor's outputs diffed against it
// the way `pao diff` does (from files): the fixture of the diff tests.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"
#include "support/temp_dir.hpp"

namespace pao::test {

struct GoldenOnDisk {
  TempDir dir;
  golden::GoldenTensors g;
  std::filesystem::path golden_path;

  explicit GoldenOnDisk(const cases::Case& c)
      : g(golden::make_golden(c)), golden_path(dir.path() / "golden.safetensors") {
    write_safetensors(golden_path, g.views(), g.metadata);
  }

  /// A copy of the golden's tensor `name`: what a vendor starts from.
  Tensor copy(const std::string& name) const { return Tensor::copy_of(g.find(name)->view()); }

  /// The vendor's file `name` holding `outputs` (views of tensors alive for the call), through
  /// pao diff.
  diff::CaseReport diff(const NamedTensorViews& outputs, const std::string& name,
                        const diff::DiffOptions& options = {}) const {
    const std::filesystem::path p = dir.path() / (name + ".safetensors");
    write_safetensors(p, outputs, {});
    return diff::diff_case(golden_path, p, options);
  }

  /// The report of the golden's tensor `name`.
  static const diff::TensorReport& tensor(const diff::CaseReport& r, const std::string& name) {
    for (const auto& t : r.tensors)
      if (t.name == name) return t;
    FAIL("no report of ", name);
    return r.tensors.front();
  }
};

}  // namespace pao::test

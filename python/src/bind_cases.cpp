// pao._pao's cases and golden files: parse a case, make its seeded tensors and outputs (as `pao
// golden` does), read and write goldens, write a dict of tensors as safetensors.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "buffer.hpp"
#include "pao/cases/case.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/golden/writer.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::python {

namespace nb = nanobind;

namespace {

using NamedArrays = std::vector<std::tuple<std::string, std::string, nb::object>>;

NamedArrays to_python(std::vector<std::pair<std::string, Tensor>>&& tensors) {
  NamedArrays out;
  for (auto& [name, t] : tensors) {
    const std::string dtype(dtype_name(t.dtype()));
    out.emplace_back(name, dtype, to_numpy(std::move(t)));
  }
  return out;
}

std::map<std::string, std::string> metadata_of(const SafetensorsMetadata& m) {
  return std::map<std::string, std::string>(m.begin(), m.end());
}

cases::Case parse(const std::string& json) { return cases::parse_case(json, "case"); }

std::pair<NamedArrays, std::map<std::string, std::string>> golden_tensors(const std::string& case_json,
                                                                          const std::string& outputs) {
  const cases::Case c = parse(case_json);
  const golden::OutputSelection selection = golden::parse_output_selection(outputs, "outputs");
  golden::GoldenTensors g;
  {
    nb::gil_scoped_release release;
    g = golden::make_golden(c, selection);
  }
  auto metadata = metadata_of(g.metadata);
  return {to_python(std::move(g.tensors)), std::move(metadata)};
}

std::pair<NamedArrays, std::map<std::string, std::string>> read_golden(const std::string& path,
                                                                       bool complete) {
  golden::GoldenTensors g;
  {
    nb::gil_scoped_release release;
    g = golden::read_golden(golden::TensorFile::open(path), complete);
  }
  auto metadata = metadata_of(g.metadata);
  return {to_python(std::move(g.tensors)), std::move(metadata)};
}

std::string write_golden(const std::string& case_json, const std::string& dir, const std::string& format,
                         const std::string& outputs) {
  const cases::Case c = parse(case_json);
  const golden::OutputSelection selection = golden::parse_output_selection(outputs, "outputs");
  nb::gil_scoped_release release;
  const golden::WrittenGolden w =
      golden::write_golden(golden::make_golden(c, selection), dir, golden::parse_golden_format(format));
  return (std::filesystem::path(dir) / w.file).string();
}

/// The case's seeded tensors run through its kernel in one precision: decode V1 (`v1.out`) and V2
/// (`v2.out` and its partials), prefix `prefix.out`, reshape_and_cache the written caches.
NamedArrays case_outputs(const std::string& case_json, const std::string& precision) {
  const cases::Case c = parse(case_json);
  require(precision == "kernel" || precision == "exact", "precision: '", precision,
          "' (expected \"kernel\" or \"exact\")");
  const Precision p = precision == "kernel" ? Precision::kernel : Precision::exact;
  std::vector<std::pair<std::string, Tensor>> out;
  nb::gil_scoped_release release;
  out = kinds::kind_of(c).run(c, p);
  nb::gil_scoped_acquire acquire;
  return to_python(std::move(out));
}

void write_tensors(const std::string& path, const std::vector<Buffer>& tensors,
                   const std::map<std::string, std::string>& metadata) {
  NamedTensorViews views;
  for (const auto& b : tensors) views.emplace_back(b.name(), b.view());
  SafetensorsMetadata m(metadata.begin(), metadata.end());
  nb::gil_scoped_release release;
  write_safetensors(path, views, m);
}

}  // namespace

void bind_cases(nb::module_& m) {
  m.def(
      "canonical_case", [](const std::string& json) { return cases::case_to_json(parse(json), 2); },
      nb::arg("json"), "The case's canonical JSON (defaults filled in, lengths resolved, id made).");
  m.def(
      "describe_case", [](const std::string& json) { return cases::describe(parse(json)); }, nb::arg("json"));
  m.def("golden_tensors", &golden_tensors, nb::arg("case_json"), nb::arg("outputs") = "all",
        "The tensors and metadata `pao golden` writes for the case: [(name, dtype, array)], {key: value}.");
  m.def("read_golden", &read_golden, nb::arg("path"), nb::arg("complete") = true,
        "A golden file's tensors (outputs it leaves out recomputed unless complete=False) and metadata.");
  m.def("write_golden", &write_golden, nb::arg("case_json"), nb::arg("dir"),
        nb::arg("format") = "safetensors", nb::arg("outputs") = "all",
        "Writes the case's golden into `dir`; returns its path.");
  m.def("case_outputs", &case_outputs, nb::arg("case_json"), nb::arg("precision") = "kernel",
        "The case's kernel outputs in one precision: [(name, dtype, array)].");
  m.def("write_tensors", &write_tensors, nb::arg("path"), nb::arg("tensors"), nb::arg("metadata"),
        "Writes Buffers as a safetensors file (a vendor's outputs for pao diff).");
}

}  // namespace pao::python

// pao._pao: the C++ oracle, diff and simulator behind the `pao` Python package. pao::Error becomes
// pao.Error (a ValueError) carrying the C++ message: the tensor, the index, the rule.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"

namespace nb = nanobind;

NB_MODULE(_pao, m) {
  m.doc() = "pao's C++ core (the pao package wraps it; see docs/python.md)";
  nb::exception<pao::Error>(m, "Error", PyExc_ValueError);
  m.attr("version") = PAO_VERSION;
  m.def(
      "data_dir", [] { return pao::data_dir().string(); },
      "The data folder pao reads suites and devices from.");
  pao::python::bind_ops(m);
  pao::python::bind_cases(m);
  pao::python::bind_diff(m);
  pao::python::bind_sim(m);
}

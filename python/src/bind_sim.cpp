// pao._pao's simulator: `pao sim run` (the --json result) and `pao sim sweep` (its CSV) for a
// workload given as a case.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "pao/cases/case.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/engine/report.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/model/workload.hpp"
#include "pao/sim/studies/sweep.hpp"

namespace pao::python {

namespace nb = nanobind;

namespace {

std::string sim_run(const std::string& device_name, const std::string& kernel_spec,
                    const std::string& case_json) {
  const cases::Case c = cases::parse_case(case_json, "workload");
  const sim::Device device = sim::load_device(device_name);
  const sim::Workload workload = sim::workload_of(c);
  const sim::KernelConfig kernel = sim::parse_kernel_spec(kernel_spec, sim::kernel_defaults_of(c, {}));
  nb::gil_scoped_release release;
  const auto launches = sim::build_launches(device, workload, kernel);
  const sim::SimResult result = sim::simulate(device, launches);
  return sim::result_to_json(result, device, workload, kernel).dump();
}

std::string sim_sweep(const std::string& device_name, const std::vector<std::string>& kernel_specs,
                      const std::string& case_json, const std::vector<std::string>& axes) {
  const cases::Case c = cases::parse_case(case_json, "workload");
  sim::SweepSpec spec;
  spec.device = sim::load_device(device_name);
  spec.base = sim::workload_of(c);
  for (const auto& k : kernel_specs)
    spec.kernels.push_back(sim::parse_kernel_spec(k, sim::kernel_defaults_of(c, {})));
  for (const auto& a : axes) spec.axes.push_back(sim::parse_axis(a));
  nb::gil_scoped_release release;
  return sim::sweep_csv(spec, sim::run_sweep(spec));
}

}  // namespace

void bind_sim(nb::module_& m) {
  m.def("sim_run", &sim_run, nb::arg("device"), nb::arg("kernel"), nb::arg("case_json"),
        "pao sim run --json: the result as JSON text.");
  m.def("sim_sweep", &sim_sweep, nb::arg("device"), nb::arg("kernels"), nb::arg("case_json"), nb::arg("axes"),
        "pao sim sweep: the CSV text.");
}

}  // namespace pao::python

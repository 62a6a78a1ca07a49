// The parts of the pao._pao extension module, one registration function per concept, and the
// one way a pao Tensor becomes a Python array.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "pao/core/tensor.hpp"

namespace pao::python {

void bind_ops(nanobind::module_& m);    // bind_ops.cpp: decode, prefix, write_cache, Buffer
void bind_cases(nanobind::module_& m);  // bind_cases.cpp: cases and golden files
void bind_diff(nanobind::module_& m);   // bind_diff.cpp: pao diff
void bind_sim(nanobind::module_& m);    // bind_sim.cpp: pao sim run / sweep

/// A numpy array owning `t` (no copy): bf16 as its uint16 bits, fp8 as uint8 codes; pao/_tensors.py
/// gives them their dtype. Returned as (name, pao dtype name, array) by the functions of bind_cases.
nanobind::object to_numpy(Tensor&& t);

}  // namespace pao::python

// The descriptors the table of kinds.cpp lists, one per file (private to kinds/).
#pragma once

#include "pao/kinds/kernel_kind.hpp"

namespace pao::kinds::detail {

const KernelKind& decode_kind();
const KernelKind& prefix_kind();
const KernelKind& reshape_and_cache_kind();
const KernelKind& write_and_attend_kind();

}  // namespace pao::kinds::detail

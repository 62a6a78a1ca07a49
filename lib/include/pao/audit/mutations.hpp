// The mutation library of `pao mutate` and `pao audit`: vendor outputs with the bugs attention
// kernels really have, and legitimate implementations that must pass — all computed for real
// (the independent kernel of mutant_kernel.hpp with one bug switched on, or pao's own kernels at
// another partition size or reduction order), never by perturbing a golden. A mutation that
// cannot change a case's outputs says why instead of planting nothing.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pao/audit/mutant_kernel.hpp"
#include "pao/cases/case.hpp"
#include "pao/golden/tensors.hpp"

namespace pao::audit {

enum class MutationKind : std::uint8_t { bug, legitimate };

struct Mutation {
  std::string name;  // "window_plus_one"
  MutationKind kind = MutationKind::bug;
  std::string description;
};

/// Every mutation, the bugs first, in a fixed order.
const std::vector<Mutation>& mutations();
/// One line per mutation, "  name   bug    description", for --help texts.
std::string mutation_table();
/// Throws pao::Error listing the names when `name` is not one.
const Mutation& find_mutation(std::string_view name);

/// Why `m` cannot change the outputs of `c` ("no sequence has 2+ V2 partitions: the longest has 255
/// tokens, partition_size 256"), or "" when it applies.
std::string not_applicable(const Mutation& m, const cases::Case& c);

/// The outputs a vendor with mutation `m` hands over for case `c` (decode: out, tmp_out, max_logits,
/// exp_sums where the implementation has them; prefix: out). `golden` holds the case's inputs.
std::vector<std::pair<std::string, Tensor>> vendor_outputs(const Mutation& m, const cases::Case& c,
                                                           const golden::GoldenTensors& golden);

/// Adds to `outputs` the caches a kind that writes them (write_and_attend, reshape_and_cache) hands
/// over beside its attention output, from `golden`, where `outputs` lacks them: the library's bugs
/// are the attention's, so its vendors write the caches right. Only the caches the case has (an
/// integer cache's scales and zero points with an integer cache).
void add_written_caches(const cases::Case& c, const golden::GoldenTensors& golden,
                        std::vector<std::pair<std::string, Tensor>>& outputs);

}  // namespace pao::audit

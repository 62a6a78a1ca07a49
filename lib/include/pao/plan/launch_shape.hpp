// The rules every attention launch's shape obeys, one definition for the plans (decode and
// prefix) and the simulator's workloads: sizes positive, GQA / MQA's num_heads % num_kv_heads == 0,
// one length per sequence.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pao {

/// Throws pao::Error naming the size and the rule broken.
void check_launch_shape(std::int32_t num_seqs, std::size_t num_seq_lens, std::int32_t num_heads,
                        std::int32_t num_kv_heads, std::int32_t head_size, std::int32_t block_size);

}  // namespace pao

// Where an element of an output lives in the paged structure: its sequence (or new token) and
// head and dim, and for V2 partials its partition with the tokens, logical KV blocks and physical
// KV blocks that partition reads; for prefix outputs the token's position and its KV block.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/core/tensor.hpp"

namespace pao::diff {

/// The index structure of an output tensor.
enum class OutputLayout : std::uint8_t {
  seq_head_dim,            // decode out: [num_seqs, num_heads, head_size]
  seq_head_partition_dim,  // v2.tmp_out: [num_seqs, num_heads, max_num_partitions, head_size]
  seq_head_partition,      // v2.max_logits, v2.exp_sums: [num_seqs, num_heads, max_num_partitions]
  token_head_dim,          // prefix out: [num_tokens, num_heads, head_size]
};
OutputLayout layout_of(std::string_view canonical_name, cases::CaseKernel kernel);
bool has_partitions(OutputLayout layout);

/// What location mapping needs from a golden: the case's launch shape and the rest below.
struct CaseGeometry : LaunchShape {
  cases::CaseKernel kernel = cases::CaseKernel::decode;
  std::int32_t partition_size = KernelTuning{}.partition_size, max_num_partitions = 1;
  std::vector<std::int32_t> seq_lens;
  std::vector<std::int32_t> query_start_loc;  // prefix: num_seqs + 1 entries
  std::vector<std::int32_t> token_seq;        // prefix: the sequence of every new token
  std::vector<std::int32_t> block_tables;     // row-major [num_seqs, table_columns]
  std::int32_t table_columns = 0;
  // What the structural causes test the failing set against (diff/structure.hpp):
  std::int32_t sliding_window = 0;  // as the kernels compute it (0 for a vLLM-faithful case)
  bool poison_unused = true;        // the golden's unused cache slots hold NaN

  /// The kind has V2 partitions (partition_size, the partials, the reduce).
  bool partitioned() const;

  /// The query heads that share a KV head.
  std::int32_t group_size() const { return num_kv_heads > 0 ? num_heads / num_kv_heads : 1; }

  /// Builds from the case and the golden's block_tables, seq_lens (and query_start_loc for
  /// prefix); checks they agree with the case.
  static CaseGeometry make(const cases::Case& c, const Tensor& block_tables, const Tensor& seq_lens,
                           const Tensor* query_start_loc);

  /// ceil(seq_len / partition_size): the partitions V2 writes for sequence s.
  std::int32_t partitions_of(std::int32_t seq) const;
  std::int32_t query_len(std::int32_t seq) const;
  std::int32_t context_len(std::int32_t seq) const {
    return seq_lens[static_cast<std::size_t>(seq)] - query_len(seq);
  }
  /// The physical block of logical block b of sequence s (-1 past the table).
  std::int32_t physical_block(std::int32_t seq, std::int32_t block) const;
};

/// The cheap part of a location, computed for every element.
struct Coords {
  std::int32_t seq = -1;
  std::int32_t token = -1;  // prefix: index among all new tokens
  std::int32_t head = -1;
  std::int32_t dim = -1;
  std::int32_t partition = -1;
};
Coords coords_of(const CaseGeometry& g, OutputLayout layout, const Shape& shape, std::int64_t flat);

/// True for V2 partials of partitions at or past a sequence's end: vendors leave those unwritten.
bool excluded(const CaseGeometry& g, const Coords& c);

struct Location {
  std::int64_t flat = -1;
  Shape index;  // the multi-index
  Coords coords;
  std::int32_t position = -1;  // prefix: the token's position in its sequence (context first)
  std::int32_t token_begin = -1, token_end = -1;  // the KV tokens the element depends on ([begin, end))
  std::int32_t block_begin = -1, block_end = -1;  // logical KV blocks [begin, end)
  std::vector<std::int32_t> physical_blocks;      // of those logical blocks
};
Location locate(const CaseGeometry& g, OutputLayout layout, const Shape& shape, std::int64_t flat);

/// "seq 2, head 1, partition 1 (tokens 64..127, logical blocks 4..7 -> physical 31 5 12 40), dim 17"
std::string describe(const Location& location);

}  // namespace pao::diff

// Mapping flat output indices to sequences, heads, partitions and KV blocks (pao/diff/location.hpp).
#include "pao/diff/location.hpp"

#include <algorithm>
#include <sstream>

#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"

namespace pao::diff {

namespace {

std::vector<std::int32_t> i32_values(const Tensor& t, std::string_view name) {
  require(t.dtype() == DType::i32, "golden ", name, ": dtype ", dtype_name(t.dtype()), ", expected i32");
  const auto* p = t.data<std::int32_t>();
  return std::vector<std::int32_t>(p, p + t.numel());
}

}  // namespace

OutputLayout layout_of(std::string_view name, cases::CaseKernel kernel) {
  const kinds::KernelKind& kind = kinds::kind_of(kernel);
  const kinds::OutputSpec* spec = kind.output(name);
  // Not an output of the kind (the oracle's reduce of a vendor's partials): the rows of its
  // attention output.
  const kinds::RowLayout layout =
      spec != nullptr ? spec->layout : kind.attention_rows().value_or(kinds::RowLayout::per_sequence);
  switch (layout) {
    case kinds::RowLayout::per_sequence_partition_dim:
      return OutputLayout::seq_head_partition_dim;
    case kinds::RowLayout::per_sequence_partition:
      return OutputLayout::seq_head_partition;
    case kinds::RowLayout::per_token:
      return OutputLayout::token_head_dim;
    case kinds::RowLayout::per_sequence:
    case kinds::RowLayout::cache:
      break;
  }
  return OutputLayout::seq_head_dim;
}

bool has_partitions(OutputLayout layout) {
  return layout == OutputLayout::seq_head_partition_dim || layout == OutputLayout::seq_head_partition;
}

CaseGeometry CaseGeometry::make(const cases::Case& c, const Tensor& block_tables, const Tensor& seq_lens,
                                const Tensor* query_start_loc) {
  CaseGeometry g;
  static_cast<LaunchShape&>(g) = c;
  g.kernel = c.kernel;
  g.partition_size = c.partition_size;
  g.max_num_partitions = cases::max_num_partitions(c);
  g.seq_lens = i32_values(seq_lens, "seq_lens");
  require(g.seq_lens == c.seq_lens, "golden: seq_lens tensor disagrees with the case's seq_lens");
  require(block_tables.rank() == 2 && block_tables.size(0) == c.num_seqs, "golden block_tables: shape ",
          shape_to_string(block_tables.shape()), ", expected [", c.num_seqs, ", columns]");
  g.block_tables = i32_values(block_tables, "block_tables");
  g.table_columns = static_cast<std::int32_t>(block_tables.size(1));
  g.sliding_window = cases::kernel_features(c).sliding_window;
  g.poison_unused = c.poison_unused;
  if (kinds::kind_of(c).traits().new_tokens) {
    require(query_start_loc != nullptr, "golden: a ", kinds::kind_of(c).name(),
            " golden needs query_start_loc");
    g.query_start_loc = i32_values(*query_start_loc, "query_start_loc");
    require(g.query_start_loc.size() == static_cast<std::size_t>(c.num_seqs) + 1,
            "golden query_start_loc: ", g.query_start_loc.size(),
            " entries, expected num_seqs + 1 = ", c.num_seqs + 1);
    for (std::int32_t s = 0; s < c.num_seqs; ++s)
      for (std::int32_t t = g.query_start_loc[static_cast<std::size_t>(s)];
           t < g.query_start_loc[static_cast<std::size_t>(s) + 1]; ++t)
        g.token_seq.push_back(s);
  }
  return g;
}

bool CaseGeometry::partitioned() const { return kinds::kind_of(kernel).partitioned(); }

std::int32_t CaseGeometry::partitions_of(std::int32_t seq) const {
  return partitions_of_sequence(seq_lens[static_cast<std::size_t>(seq)], partition_size);
}

std::int32_t CaseGeometry::query_len(std::int32_t seq) const {
  if (query_start_loc.empty()) return 1;
  return query_start_loc[static_cast<std::size_t>(seq) + 1] - query_start_loc[static_cast<std::size_t>(seq)];
}

std::int32_t CaseGeometry::physical_block(std::int32_t seq, std::int32_t block) const {
  if (seq < 0 || seq >= num_seqs || block < 0 || block >= table_columns) return -1;
  return block_tables[static_cast<std::size_t>(seq) * static_cast<std::size_t>(table_columns) +
                      static_cast<std::size_t>(block)];
}

Coords coords_of(const CaseGeometry& g, OutputLayout layout, const Shape& shape, std::int64_t flat) {
  Coords c;
  switch (layout) {
    case OutputLayout::seq_head_dim:
      c.dim = static_cast<std::int32_t>(flat % shape[2]);
      c.head = static_cast<std::int32_t>(flat / shape[2] % shape[1]);
      c.seq = static_cast<std::int32_t>(flat / (shape[2] * shape[1]));
      break;
    case OutputLayout::seq_head_partition_dim:
      c.dim = static_cast<std::int32_t>(flat % shape[3]);
      c.partition = static_cast<std::int32_t>(flat / shape[3] % shape[2]);
      c.head = static_cast<std::int32_t>(flat / (shape[3] * shape[2]) % shape[1]);
      c.seq = static_cast<std::int32_t>(flat / (shape[3] * shape[2] * shape[1]));
      break;
    case OutputLayout::seq_head_partition:
      c.partition = static_cast<std::int32_t>(flat % shape[2]);
      c.head = static_cast<std::int32_t>(flat / shape[2] % shape[1]);
      c.seq = static_cast<std::int32_t>(flat / (shape[2] * shape[1]));
      break;
    case OutputLayout::token_head_dim:
      c.dim = static_cast<std::int32_t>(flat % shape[2]);
      c.head = static_cast<std::int32_t>(flat / shape[2] % shape[1]);
      c.token = static_cast<std::int32_t>(flat / (shape[2] * shape[1]));
      c.seq = static_cast<std::size_t>(c.token) < g.token_seq.size()
                  ? g.token_seq[static_cast<std::size_t>(c.token)]
                  : -1;
      break;
  }
  return c;
}

bool excluded(const CaseGeometry& g, const Coords& c) {
  return c.partition >= 0 && c.seq >= 0 && c.partition >= g.partitions_of(c.seq);
}

Location locate(const CaseGeometry& g, OutputLayout layout, const Shape& shape, std::int64_t flat) {
  Location loc;
  loc.flat = flat;
  loc.coords = coords_of(g, layout, shape, flat);
  loc.index = index_of_flat(shape, flat);
  const Coords& c = loc.coords;
  if (c.seq < 0 || c.seq >= g.num_seqs) return loc;
  const std::int32_t len = g.seq_lens[static_cast<std::size_t>(c.seq)];
  if (c.partition >= 0) {
    const IndexRange tokens = partition_tokens(len, g.partition_size, c.partition);
    loc.token_begin = tokens.begin;
    loc.token_end = tokens.end;
  } else if (c.token >= 0) {
    const std::int32_t i = c.token - g.query_start_loc[static_cast<std::size_t>(c.seq)];
    loc.position = g.context_len(c.seq) + i;
    loc.token_begin = loc.position;
    loc.token_end = loc.position + 1;
  }
  if (loc.token_end > loc.token_begin) {
    const IndexRange blocks = blocks_of_tokens({loc.token_begin, loc.token_end}, g.block_size);
    loc.block_begin = blocks.begin;
    loc.block_end = blocks.end;
    for (std::int32_t b = loc.block_begin; b < loc.block_end; ++b)
      loc.physical_blocks.push_back(g.physical_block(c.seq, b));
  }
  return loc;
}

std::string describe(const Location& loc) {
  std::ostringstream os;
  const Coords& c = loc.coords;
  if (c.token >= 0) {
    os << "token " << c.token << " (seq " << c.seq << ", position " << loc.position << ")";
  } else {
    os << "seq " << c.seq;
  }
  os << ", head " << c.head;
  if (c.partition >= 0) {
    os << ", partition " << c.partition;
    if (loc.token_end > loc.token_begin) {
      os << " (tokens " << loc.token_begin << ".." << loc.token_end - 1;
    } else {
      os << " (past the sequence's end";
    }
  }
  if (loc.block_end > loc.block_begin) {
    os << (c.partition >= 0 ? ", " : " (");
    if (loc.block_end - loc.block_begin == 1) {
      os << "logical block " << loc.block_begin << " -> physical " << loc.physical_blocks.front();
    } else {
      os << "logical blocks " << loc.block_begin << ".." << loc.block_end - 1 << " -> physical";
      const std::size_t n = loc.physical_blocks.size();
      for (std::size_t i = 0; i < n; ++i) {
        if (n > 8 && i == 4) {  // the first four and the last three
          os << " ...";
          i = n - 4;
          continue;
        }
        os << " " << loc.physical_blocks[i];
      }
    }
  }
  if (c.partition >= 0 || loc.block_end > loc.block_begin) os << ")";
  if (c.dim >= 0) os << ", dim " << c.dim;
  return os.str();
}

}  // namespace pao::diff

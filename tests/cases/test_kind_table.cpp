// The table of kinds (pao/kinds/kernel_kind.hpp): the facts derived from a kind's lists
// (partitioned, writes_cache, attention_rows) agree with what its lists and cases hold.
#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>

#include "pao/kinds/kernel_kind.hpp"

using namespace pao;
using kinds::RowLayout;

namespace {

template <class List>
bool lists(const List& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool has_layout(const kinds::KernelKind& kind, RowLayout layout) {
  const auto& outs = kind.traits().outputs;
  return std::any_of(outs.begin(), outs.end(),
                     [&](const kinds::OutputSpec& o) { return o.layout == layout; });
}

}  // namespace

TEST_CASE("a kind's derived facts agree with its fields, inputs and outputs") {
  for (const kinds::KernelKind* kind : kinds::kernel_kinds()) {
    CAPTURE(kind->name());
    const kinds::KindTraits& t = kind->traits();
    // V2: partition_size is its field and the partials are among its outputs.
    CHECK(kind->partitioned() == lists(t.fields, "partition_size"));
    CHECK(kind->partitioned() == has_layout(*kind, RowLayout::per_sequence_partition));
    // A cache write reads the caches before it.
    CHECK(kind->writes_cache() == lists(t.inputs, "key_cache_before"));
    // An attention output, with a row per new token exactly when the kind takes new tokens.
    CHECK(kind->attention_rows().has_value() == t.attends);
    CHECK(kind->attention_rows().has_value() == lists(t.inputs, "query"));
    if (t.attends)
      CHECK((*kind->attention_rows() == RowLayout::per_token) ==
            (t.new_tokens && lists(t.inputs, "query_start_loc")));
  }
}

TEST_CASE("the four kinds of vLLM's ops, as the ops are") {
  const auto& decode = kinds::kind_of(cases::CaseKernel::decode);
  CHECK(decode.partitioned());
  CHECK_FALSE(decode.writes_cache());
  CHECK(decode.attention_rows() == RowLayout::per_sequence);
  const auto& prefix = kinds::kind_of(cases::CaseKernel::prefix);
  CHECK_FALSE(prefix.partitioned());
  CHECK_FALSE(prefix.writes_cache());
  CHECK(prefix.attention_rows() == RowLayout::per_token);
  const auto& reshape = kinds::kind_of(cases::CaseKernel::reshape_and_cache);
  CHECK_FALSE(reshape.partitioned());
  CHECK(reshape.writes_cache());
  CHECK_FALSE(reshape.attention_rows().has_value());
  const auto& fused = kinds::kind_of(cases::CaseKernel::write_and_attend);
  CHECK_FALSE(fused.partitioned());
  CHECK(fused.writes_cache());
  CHECK(fused.attention_rows() == RowLayout::per_token);
}

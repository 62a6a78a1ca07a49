// The cases of pao-bench.
#include "bench_cases.hpp"

#include "pao/decode_case.hpp"
#include "pao/error.hpp"
#include "pao/paged_attention.hpp"

namespace pao::bench {

namespace {

BenchCase decode_case() {
  DecodeCaseSpec spec;
  spec.num_seqs = 8;
  spec.num_heads = 32;
  spec.num_kv_heads = 8;
  spec.head_size = 128;
  spec.block_size = 16;
  spec.seq_lens.assign(8, 32768);
  spec.dtype = spec.kv_cache_dtype = DType::f16;
  spec.partition_size = 512;
  spec.extra_table_columns = 0;
  spec.num_blocks = 8 * 32768 / 16;
  auto c = std::make_shared<DecodeCase>(make_decode_case(spec));
  BenchCase b;
  b.name = "decode";
  const double tokens = 8.0 * 32768;
  b.kv_bytes = tokens * spec.num_kv_heads * spec.head_size * 2 /*K,V*/ * 2 /*bytes*/;
  b.flops = tokens * spec.num_heads * spec.head_size * 2 /*QK, PV*/ * 2 /*mul+add*/;
  b.inputs = c;
  b.run = [c](bool exact) { paged_attention_v2(c->args(), exact ? Precision::exact : Precision::kernel); };
  return b;
}

}  // namespace

BenchCase make_bench_case(const std::string& name) {
  if (name == "decode") return decode_case();
  fail("pao-bench: unknown case '", name, "' (expected decode or prefill)");
}

}  // namespace pao::bench

// The cases of pao-bench.
#include "bench_cases.hpp"

#include "pao/decode_case.hpp"
#include "pao/error.hpp"
#include "pao/paged_attention.hpp"
#include "pao/prefix_case.hpp"

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
  // Per query head, token and dim, vLLM's f16 P·V takes v_vec_size = 8 products and 6 sums of
  // the even / odd halves per 8 tokens, each rounded to f16 (docs/numerics.md).
  b.kernel_f16_roundings = tokens * spec.num_heads * spec.head_size * (8.0 + 6.0) / 8.0;
  b.inputs = c;
  b.run = [c](bool exact) { paged_attention_v2(c->args(), exact ? Precision::exact : Precision::kernel); };
  return b;
}

BenchCase prefill_case() {
  PrefixCaseSpec spec;
  spec.num_heads = 32;
  spec.num_kv_heads = 8;
  spec.head_size = 128;
  spec.block_size = 16;
  spec.dtype = spec.kv_cache_dtype = DType::f16;
  spec.context_lens.assign(4, 2048);
  spec.query_lens.assign(4, 512);
  auto c = std::make_shared<PrefixCase>(make_prefix_case(spec));
  BenchCase b;
  b.name = "prefill";
  // Each new token i (0-based in its chunk) attends to context + i + 1 keys.
  double keys = 0;
  for (std::size_t s = 0; s < spec.context_lens.size(); ++s)
    for (std::int32_t i = 0; i < spec.query_lens[s]; ++i) keys += spec.context_lens[s] + i + 1;
  b.flops = keys * spec.num_heads * spec.head_size * 2 /*QK, PV*/ * 2;
  const double kv_tokens = 4.0 * (2048 + 512);
  b.kv_bytes = kv_tokens * spec.num_kv_heads * spec.head_size * 2 * 2;
  b.inputs = c;
  b.run = [c](bool exact) { prefix_attention(c->args(), exact ? Precision::exact : Precision::kernel); };
  return b;
}

}  // namespace

BenchCase make_bench_case(const std::string& name) {
  if (name == "decode") return decode_case();
  if (name == "prefill") return prefill_case();
  fail("pao-bench: unknown case '", name, "' (expected decode or prefill)");
}

}  // namespace pao::bench

// The cases of pao-bench, from the case model.
#include "bench_cases.hpp"

#include "pao/cases/case_tensors.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::bench {

namespace {

Precision precision(bool exact) { return exact ? Precision::exact : Precision::kernel; }

}  // namespace

void require_benchable(const cases::Case& c) {
  // The cases make_decode_case / make_prefix_case build; write_and_attend's attention step is a
  // prefix case only after its cache write, which pao-bench does not time.
  require(c.kernel == cases::CaseKernel::decode || c.kernel == cases::CaseKernel::prefix, "case ", c.id,
          " is a ", kinds::kind_of(c).name(),
          " case: pao-bench times the oracle's attention kernels on decode and prefix cases only");
  golden::require_golden_memory(c);  // its tensors are a golden's inputs, before anything is allocated
}

BenchCase make_bench_case(const cases::Case& c) {
  require_benchable(c);
  BenchCase b;
  b.name = c.id;
  const double kv_row = 2.0 /*K, V*/ * c.num_kv_heads * c.head_size * dtype_size(c.cache_storage_dtype());
  const double per_key = 2.0 /*QK, PV*/ * 2.0 /*mul + add*/ * c.num_heads * c.head_size;
  double tokens = 0, keys = 0;
  for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
    tokens += c.seq_lens[s];
    // New token i (0-based in its chunk) attends to context + i + 1 keys (decode: one new token).
    const double ctx = c.context_len(s), q = c.seq_lens[s] - ctx;
    keys += q * ctx + q * (q + 1) / 2;
  }
  b.kv_bytes = tokens * kv_row;
  b.flops = keys * per_key;
  if (c.kernel == cases::CaseKernel::decode) {
    // Per query head, token and dim, vLLM's f16 P·V takes v_vec_size = 8 products and 6 sums of
    // the even / odd halves per 8 tokens, each rounded to f16 (docs/numerics.md).
    if (c.dtype == DType::f16 && !c.kv_cache_dtype)
      b.kernel_f16_roundings = tokens * c.num_heads * c.head_size * (8.0 + 6.0) / 8.0;
    auto t = std::make_shared<cases::DecodeCase>(cases::make_decode_case(c));
    b.inputs = t;
    b.run = [t](bool exact) { paged_attention_v2(t->args(), precision(exact), t->spec); };
  } else {
    auto t = std::make_shared<cases::PrefixCase>(cases::make_prefix_case(c));
    b.inputs = t;
    b.run = [t](bool exact) { prefix_attention(t->args(), precision(exact), t->spec); };
  }
  return b;
}

}  // namespace pao::bench

// paged_attention_v2_reduce on caller-given partials (e.g. a vendor's tmp_out, max_logits and
// exp_sums), so that a partial-kernel bug can be told from a reduce-kernel bug.
#include <vector>

#include "kernels/common/paged_kv.hpp"
#include "kernels/decode/decode_reduce.hpp"
#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao {

DecodeOutputs paged_attention_v2_reduce(const ReduceArgs& args, Precision precision,
                                        const KernelTuning& tuning) {
  const TensorView& t = args.tmp_out;
  require(is_activation(t.dtype), "tmp_out: dtype ", dtype_name(t.dtype), ", expected ",
          dtype_names(is_activation, " or "));
  detail::check_tensor(t, "tmp_out", {-1, -1, -1, -1},
                       "[num_seqs, num_heads, max_num_partitions, head_size]");
  const std::int64_t S = t.shape[0], H = t.shape[1], P = t.shape[2], hs = t.shape[3];
  for (const auto* v : {&args.max_logits, &args.exp_sums}) {
    const char* name = v == &args.max_logits ? "max_logits" : "exp_sums";
    require(v->dtype == DType::f32, name, ": dtype ", dtype_name(v->dtype), ", expected f32");
    detail::check_tensor(*v, name, {S, H, P}, "[num_seqs, num_heads, max_num_partitions] (as tmp_out)");
  }
  const auto seq_lens = detail::read_i32_vector(args.seq_lens, "seq_lens", S);
  require(tuning.partition_size > 0, "partition_size = ", tuning.partition_size, ": must be positive");
  for (std::int64_t s = 0; s < S; ++s) {
    const std::int32_t len = seq_lens[static_cast<std::size_t>(s)];
    require(len >= 0, "seq_lens[", s, "] = ", len, ": negative length");
    const std::int32_t parts = partitions_of_sequence(len, tuning.partition_size);
    require(parts <= P, "seq_lens[", s, "] = ", len, " needs ", parts, " partitions of ",
            tuning.partition_size, " but tmp_out holds max_num_partitions = ", P);
  }
  // The reduce's arithmetic depends on warp_size and threads_per_cta only (block size and
  // element size shape the attention kernel's lanes, not the reduce's).
  if (precision == Precision::kernel) detail::check_kernel_geometry(tuning);
  const DecodeGeometry geo = DecodeGeometry::make(tuning.warp_size, tuning.threads_per_cta, 16, 4);

  DecodeOutputs o;
  o.out = Tensor(t.dtype, {S, H, hs});
  const bool exact = precision == Precision::exact;
  if (exact) o.out_f64 = Tensor(DType::f64, {S, H, hs});
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t i = 0; i < S * H; ++i) {
    const std::int64_t s = i / H, h = i % H;
    const std::int32_t np =
        partitions_of_sequence(seq_lens[static_cast<std::size_t>(s)], tuning.partition_size);
    std::vector<double> tmp(static_cast<std::size_t>(np * hs)), mx(static_cast<std::size_t>(np)),
        sm(static_cast<std::size_t>(np)), out(static_cast<std::size_t>(hs));
    for (std::int32_t j = 0; j < np; ++j) {
      mx[static_cast<std::size_t>(j)] = args.max_logits.at({s, h, j});
      sm[static_cast<std::size_t>(j)] = args.exp_sums.at({s, h, j});
      for (std::int64_t d = 0; d < hs; ++d) tmp[static_cast<std::size_t>(j * hs + d)] = t.at({s, h, j, d});
    }
    const std::size_t at = static_cast<std::size_t>(i * hs);
    if (exact) {
      detail::reduce_exact(tmp.data(), mx.data(), sm.data(), np, static_cast<std::int32_t>(hs), out.data());
      encode_from_f64(t.dtype, out.data(), o.out.bytes() + at * dtype_size(t.dtype), out.size());
      encode_from_f64(DType::f64, out.data(), o.out_f64.bytes() + at * 8, out.size());
    } else {
      // Every stored value is exact in fp32, so the round trip through double changes nothing.
      std::vector<float> tmp32(tmp.begin(), tmp.end()), mx32(mx.begin(), mx.end()),
          sm32(sm.begin(), sm.end()), out32(static_cast<std::size_t>(hs), 0.0f);
      if (np > 0)
        detail::reduce_kernel(geo, tmp32.data(), mx32.data(), sm32.data(), np, static_cast<std::int32_t>(hs),
                              out32.data());
      encode_from_f32(t.dtype, out32.data(), o.out.bytes() + at * dtype_size(t.dtype), out32.size());
    }
  }
  return o;
}

}  // namespace pao

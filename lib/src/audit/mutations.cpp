// The mutation library (pao/audit/mutations.hpp).
#include "pao/audit/mutations.hpp"

#include <algorithm>

#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/partition.hpp"

namespace pao::audit {

namespace {

using cases::Case;

struct Entry {
  Mutation mutation;
  MutantOptions mutant;  // the independent kernel's switches
  bool oracle = false;   // computed by pao's own kernels instead (legitimate variations)
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> e = [] {
    const auto bug = [](const char* name, Bug b, const char* what) {
      return Entry{{name, MutationKind::bug, what}, MutantOptions{b}, false};
    };
    const auto legit = [](const char* name, MutantOptions o, bool oracle, const char* what) {
      return Entry{{name, MutationKind::legitimate, what}, o, oracle};
    };
    MutantOptions fp32p, fma, no_guard;
    fp32p.fp32_probabilities = true;
    fma.fma = true;
    no_guard.guard = false;
    return std::vector<Entry>{
        bug("last_token_dropped", Bug::last_token_dropped,
            "attends tokens [0, seq_len - 1): the last token is lost"),
        bug("window_plus_one", Bug::window_plus_one, "sliding window one token too wide"),
        bug("window_minus_one", Bug::window_minus_one, "sliding window one token too narrow"),
        bug("causal_off_by_one", Bug::causal_off_by_one, "prefix: a query also sees the next new token"),
        bug("alibi_sign_flipped", Bug::alibi_sign_flipped, "ALiBi bias with the wrong sign"),
        bug("alibi_missing", Bug::alibi_missing, "ALiBi slopes ignored"),
        bug("k_scale_ignored", Bug::k_scale_ignored, "fp8 K dequantised without k_scale"),
        bug("v_scale_ignored", Bug::v_scale_ignored, "fp8 V dequantised without v_scale"),
        bug("softmax_scale_log2e", Bug::softmax_scale_log2e,
            "softmax scale times log2(e): exp2's fold kept, exp used"),
        bug("gqa_head_mapping", Bug::gqa_head_mapping,
            "kv head = head % num_kv_heads instead of head / group"),
        bug("block_table_off_by_one", Bug::block_table_off_by_one,
            "logical block b read from block_tables[s][b + 1]"),
        bug("partition_boundary_off_by_one", Bug::partition_boundary_off_by_one,
            "V2: each partition also takes the next partition's first token"),
        bug("reduce_without_max_rescaling", Bug::reduce_without_max_rescaling,
            "V2 reduce weights exp_sums without exp(max_logit - global max)"),
        bug("partials_swapped", Bug::partials_swapped,
            "V2: tmp_out of partitions 0 and 1 in each other's slot"),
        bug("fp8_other_format", Bug::fp8_other_format, "fp8 cache decoded as the other fp8 format"),
        bug("nan_leak", Bug::nan_leak, "P.V runs over the last block's unused (NaN) slots with p = 0"),
        bug("partial_block_dropped", Bug::partial_block_dropped,
            "decode: seq_len / block_size blocks read (rounded down): a partly filled last block is lost"),
        bug("zero_point_ignored", Bug::zero_point_ignored, "integer cache dequantised as code * scale"),
        bug("quant_params_of_neighbour", Bug::quant_params_of_neighbour,
            "integer cache: the scale / zero point of the next token (by channel: the next channel)"),
        bug("integer_sign_confused", Bug::integer_sign_confused, "u8 codes read as i8, or i8 as u8"),
        bug("u4_nibbles_swapped", Bug::u4_nibbles_swapped, "u4: the two codes of each byte exchanged"),
        legit("independent_kernel", {}, false,
              "an fp32 kernel written apart from the oracle, vLLM's rounding points"),
        legit("fp32_probabilities", fp32p, false, "probabilities kept in fp32 for P.V"),
        legit("fused_multiply_add", fma, false, "fused multiply-adds in Q.K and P.V"),
        legit("no_guard", no_guard, false, "vLLM's 1e-6 guard of 1 / exp_sum left out"),
        legit("correctly_rounded", {}, true, "the exact output rounded once (the golden's out)"),
        legit("other_partition_size", {}, true,
              "decode: pao's V2 at twice the partition size; prefix: half the tiles"),
        legit("other_reduction_order", {}, true, "pao's kernel precision at warp 64, 256 threads per CTA"),
    };
  }();
  return e;
}

const Entry& entry_of(const Mutation& m) {
  for (const auto& e : entries())
    if (e.mutation.name == m.name) return e;
  fail("unknown mutation '", m.name, "'");
}

std::int32_t longest(const Case& c) { return *std::max_element(c.seq_lens.begin(), c.seq_lens.end()); }

bool fp8(const Case& c) { return c.fp8_cache(); }

bool some_partly_filled_block(const Case& c) {
  return std::any_of(c.seq_lens.begin(), c.seq_lens.end(),
                     [&](std::int32_t l) { return l % c.block_size != 0; });
}

bool scale_not_one(double scale, const std::vector<double>& per_head) {
  if (per_head.empty()) return scale != 1.0;
  return std::any_of(per_head.begin(), per_head.end(), [](double s) { return s != 1.0; });
}

/// pao's own kernels on the golden's inputs, with one field of the case changed, written as a
/// vendor writes them (the kind's vendor outputs under their vendor names).
std::vector<std::pair<std::string, Tensor>> oracle_outputs(const std::string& name, Case c,
                                                           const golden::GoldenTensors& g) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  if (name == "other_reduction_order") c.warp_size = 64, c.threads_per_cta = 256;
  const bool decomposed = name == "other_partition_size" && kind.other_decomposition(c);
  std::vector<std::string> names;
  for (const auto& n : kind.traits().vendor_outputs) {
    // Partials of another decomposition have another shape: only the final outputs compare.
    if (decomposed && kind.output(n)->judged != kinds::OutputSpec::Judged::final_output) continue;
    names.emplace_back(n);
  }
  std::vector<std::pair<std::string, Tensor>> r;
  for (auto& [n, t] : kind.compute_outputs_as(c, g, names))
    r.emplace_back(kinds::vendor_name(*kind.output(n)), std::move(t));
  return r;
}

}  // namespace

const std::vector<Mutation>& mutations() {
  static const std::vector<Mutation> m = [] {
    std::vector<Mutation> out;
    for (const auto& e : entries()) out.push_back(e.mutation);
    return out;
  }();
  return m;
}

std::string mutation_table() {
  std::string table;
  for (const auto& m : mutations())
    table += "  " + m.name + std::string(m.name.size() < 30 ? 30 - m.name.size() : 1, ' ') +
             (m.kind == MutationKind::bug ? "bug    " : "legit  ") + m.description + "\n";
  return table;
}

const Mutation& find_mutation(std::string_view name) {
  for (const auto& m : mutations())
    if (m.name == name) return m;
  std::string names;
  for (const auto& m : mutations()) names += (names.empty() ? "" : ", ") + m.name;
  fail("unknown mutation '", name, "' (expected one of: ", names, ")");
}

std::string not_applicable(const Mutation& m, const Case& c) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  const kinds::KindTraits& traits = kind.traits();
  const std::int32_t L = longest(c);
  const std::string& n = m.name;
  if (L == 0) return "every sequence is empty: no token to attend";
  if (n == "window_plus_one" || n == "window_minus_one") {
    const std::int32_t window = cases::kernel_features(c).sliding_window;
    if (window == 0)
      return c.sliding_window == 0 ? "the case has no sliding window"
                                   : "the case is vLLM-faithful: vLLM drops its sliding window";
    if (n == "window_plus_one" && L <= window)
      return "no sequence is longer than the window (" + std::to_string(window) + ")";
    if (n == "window_minus_one" && (window < 2 || L < window))
      return "no sequence reaches the window (" + std::to_string(window) + ")";
  }
  if (n == "causal_off_by_one") {
    if (!traits.new_tokens) return std::string(kind.name()) + " has no causal mask among new tokens";
    if (*std::max_element(c.query_lens.begin(), c.query_lens.end()) < 2)
      return "no sequence has 2+ new tokens";
  }
  if ((n == "alibi_sign_flipped" || n == "alibi_missing") && !c.alibi) return "the case has no ALiBi";
  if (n == "k_scale_ignored" && !(fp8(c) && scale_not_one(c.k_scale, c.k_head_scales)))
    return fp8(c) ? "k_scale is 1" : "the cache is not fp8";
  if (n == "v_scale_ignored" && !(fp8(c) && scale_not_one(c.v_scale, c.v_head_scales)))
    return fp8(c) ? "v_scale is 1" : "the cache is not fp8";
  if (n == "fp8_other_format" && !fp8(c)) return "the cache is not fp8";
  if ((n == "zero_point_ignored" || n == "quant_params_of_neighbour" || n == "integer_sign_confused") &&
      !c.integer_cache())
    return "the cache is not an integer cache";
  if (n == "u4_nibbles_swapped" && !(c.integer_cache() && c.kv_quant.bits == 4)) return "the cache is not u4";
  if (n == "integer_sign_confused" && c.kv_quant.bits == 4)
    return "u4 codes (0..15) read the same as u8 or i8";
  if (n == "softmax_scale_log2e") {
    if (c.distribution == cases::ValueDistribution::all_equal)
      return "every K row is equal: the softmax is uniform at any scale";
    if (!traits.new_tokens && L < 2)
      return "no sequence has 2+ tokens: a softmax of one token is 1 at any scale";
  }
  if (n == "gqa_head_mapping" && (c.num_kv_heads == 1 || c.num_kv_heads == c.num_heads))
    return c.num_kv_heads == 1 ? "MQA: every head reads KV head 0 either way"
                               : "MHA: head % num_kv_heads is head / 1";
  if (n == "partition_boundary_off_by_one" || n == "reduce_without_max_rescaling" ||
      n == "partials_swapped") {
    if (!kind.partitioned()) return std::string(kind.name()) + " has no V2 partitions";
    if (partitions_of_sequence(L, c.partition_size) < 2)
      return "no sequence has 2+ V2 partitions: the longest has " + std::to_string(L) +
             " tokens, partition_size " + std::to_string(c.partition_size);
  }
  if (n == "nan_leak") {
    if (traits.new_tokens) return "planted in decode cases only";
    if (!c.poison_unused) return "the case leaves unused slots 0, not NaN";
    if (!some_partly_filled_block(c))
      return "every sequence ends on a block boundary: no unused slot is read";
  }
  if (n == "partial_block_dropped") {
    if (traits.new_tokens) return "planted in decode cases only";
    if (!some_partly_filled_block(c))
      return "every sequence ends on a block boundary: no block is partly filled";
  }
  if (n == "other_partition_size" && kind.partitioned() && c.partition_size * 2 > (1 << 14))
    return "partition_size is already the largest";
  return "";
}

std::vector<std::pair<std::string, Tensor>> vendor_outputs(const Mutation& m, const Case& c,
                                                           const golden::GoldenTensors& golden) {
  const std::string reason = not_applicable(m, c);
  require(reason.empty(), "mutation ", m.name, " does not apply to case ", c.id, ": ", reason);
  const Entry& e = entry_of(m);
  if (!e.oracle) return run_mutant(c, golden, e.mutant);
  if (m.name == "correctly_rounded") {
    const Tensor* out = golden.find("out");
    require(out != nullptr, "mutation correctly_rounded: the golden has no out");
    std::vector<std::pair<std::string, Tensor>> r;
    r.emplace_back("out", Tensor::copy_of(out->view()));
    return r;
  }
  return oracle_outputs(m.name, c, golden);
}

void add_written_caches(const Case& c, const golden::GoldenTensors& golden,
                        std::vector<std::pair<std::string, Tensor>>& outputs) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  if (!kind.writes_cache()) return;
  for (const auto& spec : kind.traits().outputs) {
    if (spec.judged != kinds::OutputSpec::Judged::cache || !kinds::golden_tensor_applies(c, spec.name))
      continue;
    const std::string name = kinds::vendor_name(spec);
    const bool present =
        std::any_of(outputs.begin(), outputs.end(), [&](const auto& o) { return o.first == name; });
    const Tensor* t = golden.find(spec.name);
    require(present || t != nullptr, "the golden of ", c.id, " has no ", spec.name,
            " (the cache its vendor writes)");
    if (!present) outputs.emplace_back(name, Tensor::copy_of(t->view()));
  }
}

}  // namespace pao::audit

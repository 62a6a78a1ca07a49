// The decode kind: vLLM's paged_attention_v1 / v2 (one new token per sequence, V2's partitions
// and reduce). Its case fields are the tuning of V2 and of the kernel precision's GPU.
#include "kinds/kind_helpers.hpp"
#include "kinds/kind_registry.hpp"
#include "kinds/typed_kind.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/kernels/paged_attention.hpp"

namespace pao::kinds::detail {

namespace {

constexpr KernelVariant kVariants[] = {KernelVariant::v1, KernelVariant::v2};
constexpr std::string_view kFields[] = {"partition_size", "warp_size", "threads_per_cta"};
constexpr auto kInputs = names_of(kDecodeInputs);  // pao/kinds/golden_tensor_lists.hpp
using J = OutputSpec::Judged;
// vLLM's argument names (paged_attention_v2's tmp_out, max_logits, exp_sum) and `output` / `o`.
constexpr std::string_view kOutAliases[] = {"output", "o"};
constexpr std::string_view kTmpOutAliases[] = {"tmp_out"};
constexpr std::string_view kMaxLogitsAliases[] = {"max_logits"};
constexpr std::string_view kExpSumsAliases[] = {"exp_sums", "exp_sum"};
constexpr OutputSpec kOutputs[] = {
    {"out", kOutAliases, RowLayout::per_sequence, J::final_output, "exact"},
    {"out_exact", {}, RowLayout::per_sequence, J::exact_reference, "exact"},
    {"v1.out", {}, RowLayout::per_sequence, J::final_output, "v1"},
    {"v2.out", {}, RowLayout::per_sequence, J::final_output, "v2"},
    {"v2.tmp_out", kTmpOutAliases, RowLayout::per_sequence_partition_dim, J::partial, "partials"},
    {"v2.max_logits", kMaxLogitsAliases, RowLayout::per_sequence_partition, J::partial, "partials"},
    {"v2.exp_sums", kExpSumsAliases, RowLayout::per_sequence_partition, J::partial, "partials"},
};

// A vendor's V2: its out and partials.
constexpr std::string_view kVendorOutputs[] = {"v2.out", "v2.tmp_out", "v2.max_logits", "v2.exp_sums"};

/// vLLM's paged_attention_v1/v2 (csrc/attention) take neither a window nor a soft-cap.
constexpr cases::VllmRule kVllmRules[] = {
    {[](const cases::Case& c) { return c.sliding_window > 0; },
     [](const cases::Case& c) {
       return text(
           "vLLM's paged_attention_v1/v2 have no sliding window: they attend to every token "
           "(sliding_window ",
           c.sliding_window, " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.sliding_window = 0; }},
    {[](const cases::Case& c) { return c.soft_cap > 0; },
     [](const cases::Case& c) {
       return text("vLLM's paged_attention_v1/v2 take no logits soft-cap (soft_cap ", c.soft_cap,
                   " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.soft_cap = 0.0; }},
};

/// The outputs `names`, each kernel run only if one of its outputs is asked for.
NamedTensors decode_outputs(const cases::DecodeCase& dc, const std::vector<std::string>& names) {
  const KernelTuning& tuning = dc.spec;
  NamedTensors t;
  if (wanted(names, "out") || wanted(names, "out_exact")) {
    DecodeOutputs exact = paged_attention_v1(dc.args(), Precision::exact, tuning);
    if (wanted(names, "out")) t.emplace_back("out", std::move(exact.out));
    if (wanted(names, "out_exact")) t.emplace_back("out_exact", std::move(exact.out_f64));
  }
  if (wanted(names, "v1.out"))
    t.emplace_back("v1.out", std::move(paged_attention_v1(dc.args(), Precision::kernel, tuning).out));
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.starts_with("v2."); })) {
    DecodeOutputs v2 = paged_attention_v2(dc.args(), Precision::kernel, tuning);
    if (wanted(names, "v2.out")) t.emplace_back("v2.out", std::move(v2.out));
    if (wanted(names, "v2.tmp_out")) t.emplace_back("v2.tmp_out", std::move(v2.tmp_out));
    if (wanted(names, "v2.max_logits")) t.emplace_back("v2.max_logits", std::move(v2.max_logits));
    if (wanted(names, "v2.exp_sums")) t.emplace_back("v2.exp_sums", std::move(v2.exp_sums));
  }
  return t;
}

class DecodeKind final : public TypedKind<KernelKind, cases::DecodeCase, kDecodeInputs,
                                          &cases::make_decode_case, &decode_outputs> {
 public:
  DecodeKind()
      : TypedKind(KindTraits{.id = cases::CaseKernel::decode,
                             .name = "decode",
                             .vllm_op = "paged_attention_v1/v2",
                             .attends = true,
                             .new_tokens = false,
                             .any_head_size = false,
                             .vllm_rules = kVllmRules,
                             .variants = kVariants,
                             .fields = kFields,
                             .inputs = kInputs,
                             .outputs = kOutputs,
                             .vendor_outputs = kVendorOutputs}) {}

  std::string describe(const cases::Case& c) const override {
    return ", partition " + std::to_string(c.partition_size);
  }

  NamedTensors run(const cases::Case& c, Precision precision) const override {
    const cases::DecodeCase dc = cases::make_decode_case(c);
    DecodeOutputs v1 = paged_attention_v1(dc.args(), precision, c);
    DecodeOutputs v2 = paged_attention_v2(dc.args(), precision, c);
    NamedTensors out;
    out.emplace_back("v1.out", std::move(v1.out));
    out.emplace_back("v2.out", std::move(v2.out));
    out.emplace_back("v2.tmp_out", std::move(v2.tmp_out));
    out.emplace_back("v2.max_logits", std::move(v2.max_logits));
    out.emplace_back("v2.exp_sums", std::move(v2.exp_sums));
    return out;
  }

  bool other_decomposition(cases::Case& c) const override {
    c.partition_size *= 2;  // partials of another shape, the same out
    return true;
  }

  Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange& change) const override {
    const cases::DecodeCase dc = golden::decode_case_of(g);
    DecodeArgs a = dc.args();
    NewKVSource unused = NewKVSource::input;  // every token comes from the cache
    change(a.options, unused);
    return paged_attention_v1(a, Precision::exact, g.golden_case).out_f64;
  }

  void write_metadata(const cases::Case& c, SafetensorsMetadata& m) const override {
    put(m, "partition_size", std::to_string(c.partition_size));
    put(m, "max_num_partitions", std::to_string(max_num_partitions(c)));
    put(m, "warp_size", std::to_string(c.warp_size));
    put(m, "threads_per_cta", std::to_string(c.threads_per_cta));
  }

  double estimated_cost(const cases::Case& c) const override {
    const double width = static_cast<double>(c.num_heads) * c.head_size;
    double work = 0;
    for (auto len : c.seq_lens) work += 3.0 * len * width;  // exact V1, kernel V1, kernel V2
    return work;
  }

  DequantThroughHalf dequant_through_half(const cases::Case& c) const override {
    if (!c.fp8_cache()) return {};
    const DecodeGeometry g = DecodeGeometry::make(c.warp_size, c.threads_per_cta, c.block_size,
                                                  static_cast<std::int32_t>(dtype_size(c.dtype)));
    return {fp8_dequant_through_half(c.dtype, g.vec_size), fp8_dequant_through_half(c.dtype, g.v_vec_size)};
  }
};

}  // namespace

const KernelKind& decode_kind() {
  static const DecodeKind kind;
  return kind;
}

}  // namespace pao::kinds::detail

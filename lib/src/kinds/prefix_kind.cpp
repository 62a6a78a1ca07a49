// The prefix kind: vLLM's context_attention_fwd (chunked prefill: new tokens attend to their
// cached context and, causally, to each other). Its case fields are the kernel's tiles and where
// it reads the new tokens' K/V.
#include "kinds/kind_helpers.hpp"
#include "kinds/kind_registry.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/prefix_attention.hpp"

namespace pao::kinds::detail {

namespace {

constexpr KernelVariant kVariants[] = {KernelVariant::prefix, KernelVariant::fallback};
constexpr std::string_view kFields[] = {"query_lens",    "block_m",          "block_n",      "context_tile",
                                        "max_query_len", "cache_new_tokens", "new_kv_source"};
constexpr std::string_view kInputs[] = {"query",
                                        "key",
                                        "value",
                                        "key_cache",
                                        "value_cache",
                                        "block_tables",
                                        "seq_lens",
                                        "query_start_loc",
                                        "alibi_slopes",
                                        "key_cache_scale",
                                        "key_cache_zero_point",
                                        "value_cache_scale",
                                        "value_cache_zero_point"};
using J = OutputSpec::Judged;
constexpr std::string_view kOutAliases[] = {"output", "o"};  // o: context_attention_fwd's
constexpr OutputSpec kOutputs[] = {
    {"out", kOutAliases, RowLayout::per_token, J::final_output, "exact"},
    {"out_exact", {}, RowLayout::per_token, J::exact_reference, "exact"},
    {"prefix.out", {}, RowLayout::per_token, J::final_output, "prefix"},
};

constexpr std::string_view kVendorOutputs[] = {"prefix.out"};

/// vLLM's context_attention_fwd (vllm/attention/ops/prefix_prefill.py).
constexpr cases::VllmRule kVllmRules[] = {
    {[](const cases::Case& c) { return c.alibi && c.sliding_window > 0; },
     [](const cases::Case& c) {
       return text(
           "vLLM's context_attention_fwd runs every ALiBi case in _fwd_kernel_alibi, which has no "
           "sliding-window parameter (sliding_window ",
           c.sliding_window, " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.sliding_window = 0; }},
    {[](const cases::Case& c) { return c.soft_cap > 0; },
     [](const cases::Case& c) {
       return text("vLLM's context_attention_fwd takes no logits soft-cap (soft_cap ", c.soft_cap,
                   " would be dropped)");
     },
     [](cases::KernelFeatures& f) { f.soft_cap = 0.0; }},
    // With a cache of the activation dtype the two sources hold the same values.
    {[](const cases::Case& c) { return c.new_kv_source == NewKVSource::cache && c.fp8_cache(); },
     [](const cases::Case&) {
       return std::string(
           "vLLM's context_attention_fwd reads the new tokens from key / value, not from the quantised "
           "cache (new_kv_source \"cache\" is FlashAttention's, FlashInfer's and IPEX's convention)");
     },
     [](cases::KernelFeatures& f) { f.new_kv_source = NewKVSource::input; }},
};

NamedTensors prefix_outputs(const cases::PrefixCase& pc, const std::vector<std::string>& names) {
  const KernelTuning& tuning = pc.spec;
  NamedTensors t;
  if (wanted(names, "out") || wanted(names, "out_exact")) {
    PrefixOutputs exact = prefix_attention(pc.args(), Precision::exact, tuning);
    if (wanted(names, "out")) t.emplace_back("out", std::move(exact.out));
    if (wanted(names, "out_exact")) t.emplace_back("out_exact", std::move(exact.out_f64));
  }
  if (wanted(names, "prefix.out"))
    t.emplace_back("prefix.out", std::move(prefix_attention(pc.args(), Precision::kernel, tuning).out));
  return t;
}

class PrefixKind final : public KernelKind {
 public:
  PrefixKind()
      : KernelKind(KindTraits{cases::CaseKernel::prefix, "prefix", "context_attention_fwd", true, true, false,
                              true, kVllmRules, kVariants, kFields, kInputs, kOutputs, kVendorOutputs}) {}

  void read_fields(const cases::FieldReader& f, cases::Case& c) const override {
    const KernelTuning vllm;
    c.block_m = f.i32("block_m", 1, vllm.block_m);
    c.block_n = f.i32("block_n", 1, vllm.block_n);
    c.context_tile = f.i32("context_tile", 1, vllm.context_tile);
    c.max_query_len = f.i32("max_query_len", 0, 0);
    c.cache_new_tokens = f.boolean("cache_new_tokens", true);
    const std::string source = f.string("new_kv_source", "input");
    if (!try_parse_new_kv_source(source, c.new_kv_source))
      f.bad("new_kv_source",
            "= \"" + source + "\": expected \"input\" (vLLM's context_attention_fwd) or \"cache\"");
    if (c.new_kv_source == NewKVSource::cache && !c.cache_new_tokens)
      f.bad("new_kv_source",
            "= \"cache\" reads the new tokens from the cache: it needs cache_new_tokens true");
  }

  void write_fields(const cases::Case& c, cases::FieldWriter& w) const override {
    w.put_int("block_m", c.block_m);
    w.put_int("block_n", c.block_n);
    w.put_int("context_tile", c.context_tile);
    if (c.max_query_len != 0) w.put_int("max_query_len", c.max_query_len);
    if (!c.cache_new_tokens) w.put_bool("cache_new_tokens", false);
    if (c.new_kv_source != NewKVSource::input)
      w.put_string("new_kv_source", new_kv_source_name(c.new_kv_source));
  }

  void id_tags(const cases::Case& c, IdSlot slot,
               const std::function<void(std::string_view, const std::string&)>& add) const override {
    const KernelTuning vllm;  // vLLM's defaults: not in the id
    switch (slot) {
      case IdSlot::tuning:
        if (c.block_m != vllm.block_m || c.block_n != vllm.block_n || c.context_tile != vllm.context_tile)
          add("m", std::to_string(c.block_m) + "n" + std::to_string(c.block_n) + "c" +
                       std::to_string(c.context_tile));
        break;
      case IdSlot::grid:
        if (c.max_query_len > 0) add("mq", std::to_string(c.max_query_len));
        if (!c.cache_new_tokens) add("nocache", "");
        break;
      case IdSlot::new_kv:
        if (c.new_kv_source == NewKVSource::cache) add("kvcache", "");
        break;
      case IdSlot::padding:
        break;
    }
  }

  std::string describe(const cases::Case& c) const override {
    return c.new_kv_source == NewKVSource::cache ? ", new K/V from the cache" : "";
  }

  void build_golden(const cases::Case& c, const std::vector<std::string>& outputs,
                    golden::GoldenTensors& g) const override {
    cases::PrefixCase pc = cases::make_prefix_case(c);
    NamedTensors computed = prefix_outputs(pc, outputs);
    auto& t = g.tensors;
    t.emplace_back("query", std::move(pc.query));
    t.emplace_back("key", std::move(pc.key));
    t.emplace_back("value", std::move(pc.value));
    t.emplace_back("key_cache", std::move(pc.key_cache));
    t.emplace_back("value_cache", std::move(pc.value_cache));
    t.emplace_back("block_tables", std::move(pc.block_tables));
    t.emplace_back("seq_lens", std::move(pc.seq_lens));
    t.emplace_back("query_start_loc", std::move(pc.query_start_loc));
    if (c.alibi) t.emplace_back("alibi_slopes", std::move(pc.alibi_slopes));
    add_quant_params(c, pc.quant, t);
    for (auto& named : computed) t.push_back(std::move(named));
  }

  NamedTensors compute_outputs_as(const cases::Case& c, const golden::GoldenTensors& g,
                                  const std::vector<std::string>& names) const override {
    cases::PrefixCase pc = golden::prefix_case_of(g);
    pc.spec = c;
    return prefix_outputs(pc, names);
  }

  NamedTensors run(const cases::Case& c, Precision precision) const override {
    const cases::PrefixCase pc = cases::make_prefix_case(c);
    NamedTensors out;
    out.emplace_back("prefix.out", std::move(prefix_attention(pc.args(), precision, c).out));
    return out;
  }

  bool other_decomposition(cases::Case& c) const override {
    c.block_m = std::max(16, c.block_m / 2);  // other tiles, the same out
    c.block_n = std::max(16, c.block_n / 2);
    return true;
  }

  Tensor exact_with(const golden::GoldenTensors& g, const ConventionChange& change) const override {
    const cases::PrefixCase pc = golden::prefix_case_of(g);
    PrefixArgs a = pc.args();
    change(a.options, a.new_kv_source);
    return prefix_attention(a, Precision::exact, g.golden_case).out_f64;
  }

  void write_metadata(const cases::Case& c, SafetensorsMetadata& m) const override {
    put(m, "query_lens", join(c.query_lens));
    put(m, "block_m", std::to_string(c.block_m));
    put(m, "block_n", std::to_string(c.block_n));
    put(m, "context_tile", std::to_string(c.context_tile));
    put(m, "new_kv_source", new_kv_source_name(cases::kernel_features(c).new_kv_source));
  }

  double estimated_cost(const cases::Case& c) const override {
    const double width = static_cast<double>(c.num_heads) * c.head_size;
    double work = 0;
    for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
      const double q = c.query_lens[s];
      work += 2.0 * q * (c.seq_lens[s] - q / 2) * width;  // exact and kernel, causal
    }
    return work;
  }
};

}  // namespace

const KernelKind& prefix_kind() {
  static const PrefixKind kind;
  return kind;
}

}  // namespace pao::kinds::detail

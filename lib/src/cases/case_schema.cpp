// The case schema (pao/cases/case_schema.hpp): one row per case JSON field. The rows are in the
// order the parser reads them (a row may check its value against the rows above it) and the order
// their tags appear in a derived id, which keeps the id of every existing golden.
#include "pao/cases/case_schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "cases/case_id_text.hpp"
#include "cases/field_hooks.hpp"
#include "cases/field_input.hpp"
#include "cases/kv_quant_json.hpp"
#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/io/json_read.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cases {

namespace {

using nlohmann::json;
using T = FieldType;
using S = FieldScope;
using G = FieldGroup;
using namespace field_hooks;

constexpr KernelTuning kVllmTuning{};

const kinds::KernelKind& kind(const Case& c) { return kinds::kind_of(c); }

// ---- the rows that need more than the shared hooks -----------------------------------------------

std::string join_names(const std::vector<std::string>& names, std::string_view last = " and ");

/// "`"decode"` (vLLM's paged_attention_v1/v2), ...": the table of kinds.
std::string kind_choices() {
  std::string out;
  for (const kinds::KernelKind* k : kinds::kernel_kinds()) {
    if (!out.empty()) out += ", ";
    out += "`\"";
    out += k->name();
    out += "\"` (vLLM's ";
    out += k->traits().vllm_op;
    out += ')';
  }
  return out;
}

/// "f32, f16 or bf16": the activation rows of the dtype table.
std::string activation_choices() { return dtype_names(is_activation, " or "); }

DType read_activation(const FieldInput& in, std::string_view name) {
  const std::string s = in.string(name, "");
  if (s.empty()) in.bad(name, "is required: " + activation_choices());
  for (const DTypeInfo& d : kDTypes)
    if (d.activation && s == d.name) return d.type;
  in.bad(name, "= \"" + excerpt(s) + "\": expected " + activation_choices());
}

void read_scale(const CaseField& self, const FieldInput& in, Case& c) {
  double& scale = self.name == "k_scale" ? c.k_scale : c.v_scale;
  scale = in.positive(self.name, 1.0);
  if (c.integer_cache() && in.has(self.name) && scale != 1.0)  // 1: what case_to_json writes for every cache
    in.bad(self.name, "applies to fp8 caches only: an integer cache (" + std::string(kv_cache_dtype_name(c)) +
                          ") has a scale per group, in the golden's key_cache_scale / value_cache_scale");
}

void read_head_scales(const CaseField& self, const FieldInput& in, Case& c) {
  if (!in.has(self.name)) return;
  if (!c.fp8_cache())
    in.bad(self.name,
           "applies to fp8 caches only (kv_cache_dtype is \"" + std::string(kv_cache_dtype_name(c)) + "\")");
  (self.name == "k_head_scales" ? c.k_head_scales : c.v_head_scales) = in.scales(self.name, c.num_kv_heads);
}

// ---- the table ------------------------------------------------------------------------------------

const CaseField kFields[] = {
    {.name = "kernel",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::identity,
     .default_text = "`\"decode\"`",
     .id_doc = "the id's first word",
     .doc = "the kind: the op the case calls, a descriptor of the table of kinds (docs/architecture.md)",
     .choices = kind_choices,
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = to_string(c.kernel); },
     .equal = same<&Case::kernel>},
    {.name = "num_heads",
     .type = T::integer,
     .scope = S::attention,
     .group = G::shape,
     .lo = 1,
     .default_text = "required",
     .doc = "query heads",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           if (!in.has(self.name)) in.bad(self.name, "is required");
           c.num_heads = in.i32(self.name, self.lo, 0);
         },
     .write = write_value<&Case::num_heads>,
     .equal = same<&Case::num_heads>},
    {.name = "num_kv_heads",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::shape,
     .lo = 1,
     .default_text = "`num_heads` (required without attention)",
     .tag = "h",
     .id_doc = "`-h<num_heads>x<num_kv_heads>` (without attention `-h<num_kv_heads>`)",
     .doc = "KV heads; must divide `num_heads` (GQA / MQA)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           if (!kind(c).traits().attends) {  // no query heads: num_heads is num_kv_heads
             if (!in.has(self.name)) in.bad(self.name, "is required");
             c.num_heads = in.i32(self.name, self.lo, 0);
           }
           c.num_kv_heads = in.i32(self.name, self.lo, c.num_heads);
           if (c.num_heads % c.num_kv_heads != 0)
             in.bad("num_heads",
                    "= " + std::to_string(c.num_heads) +
                        " is not a multiple of num_kv_heads = " + std::to_string(c.num_kv_heads));
         },
     .write = write_value<&Case::num_kv_heads>,
     .equal = same<&Case::num_kv_heads>,
     .id =
         [](const CaseField& self, const Case& c, IdBuilder& id) {
           if (kind(c).traits().attends)
             id.add(self.tag, std::to_string(c.num_heads) + "x" + std::to_string(c.num_kv_heads));
           else
             id.add(self.tag, std::to_string(c.num_kv_heads));
         }},
    {.name = "head_size",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::shape,
     .lo = 1,
     .default_text = "required",
     .tag = "d",
     .doc =
         "decode: one of vLLM's head sizes; with `kv_layout` `\"vllm\"` a multiple of x = 16 / sizeof(cache "
         "element) (8 for f16/bf16, 16 for fp8)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           if (!in.has(self.name)) in.bad(self.name, "is required");
           c.head_size = in.i32(self.name, self.lo, 0);
           // vLLM's CUDA paged attention dispatches a fixed list; its Triton prefix kernel pads any size.
           if (!kind(c).traits().any_head_size && !is_supported_head_size(c.head_size))
             in.bad(self.name, "= " + std::to_string(c.head_size) +
                                   " is not one of vLLM's decode head sizes (" + supported_head_sizes_text() +
                                   ")");
         },
     .write = write_value<&Case::head_size>,
     .equal = same<&Case::head_size>,
     .id = [](const CaseField& self, const Case& c,
              IdBuilder& id) { id.add(self.tag, std::to_string(c.head_size)); }},
    {.name = "block_size",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::shape,
     .fallback = 16,
     .lo = 1,
     .tag = "b",
     .doc = "tokens per KV block",
     .read = read_int<&Case::block_size>,
     .write = write_value<&Case::block_size>,
     .equal = same<&Case::block_size>,
     .id = [](const CaseField& self, const Case& c,
              IdBuilder& id) { id.add(self.tag, std::to_string(c.block_size)); }},
    {.name = "dtype",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "required",
     .id_doc = "`-<dtype>`",
     .doc = "query, key/value, `out`",
     .choices = activation_choices,
     .read = [](const CaseField& self, const FieldInput& in,
                Case& c) { c.dtype = read_activation(in, self.name); },
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = std::string(dtype_name(c.dtype)); },
     .equal = same<&Case::dtype>,
     .id = [](const CaseField&, const Case& c, IdBuilder& id) { id.add(dtype_name(c.dtype)); }},
    {.name = "kv_cache_dtype",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "`\"auto\"`",
     .id_doc = "`-auto`, or the cache format's short name (dtype table: `-e4m3`)",
     .doc = "`\"auto\"` (= `dtype`), an fp8 format (value = code × `k_scale` / `v_scale`; `\"fp8\"` is "
            "e4m3fn) or an integer cache of codes with scales and zero points, u4 being 4-bit codes in a u8 "
            "cache ([integer KV caches](#integer-kv-caches))",
     .choices = [] { return kv_cache_dtype_choices() + ", u4"; },
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           const std::string cache = in.string(self.name, "auto");
           try {
             set_kv_cache_dtype(c, cache);
           } catch (const Error&) {
             in.bad(self.name,
                    "= \"" + excerpt(cache) + "\": expected one of " + kv_cache_dtype_choices() + ", u4");
           }
           if (c.kv_quant.bits == 4 && c.head_size % 2 != 0)
             in.bad("head_size", "= " + std::to_string(c.head_size) + ": a u4 cache packs pairs of dims");
         },
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = std::string(kv_cache_dtype_name(c)); },
     .equal = same<&Case::kv_cache_dtype>,
     .id = [](const CaseField&, const Case& c, IdBuilder& id) { id.add(id_text::cache(c)); }},
    {.name = "kv_quant",
     .type = T::object,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "OpenVINO's layout",
     .id_doc = "`-kq<key>vq<value>` and the dtypes, rounding and rule when not the default",
     .doc =
         "integer caches only: `{\"key\": \"by_channel\", \"value\": \"by_token\", \"scale_dtype\": \"f32\", "
         "\"zero_point_dtype\": \"f32\", \"rounding\": \"half_even\", \"rule\": \"minmax_zero\"}`; `key` / "
         "`value` each `\"by_token\"`, `\"by_channel\"` or `\"group_<G>\"`, the dtypes `\"f32\"` or "
         "`\"f16\"`, "
         "`rounding` `\"half_even\"` or `\"half_away\"`, `rule` `\"minmax_zero\"` (pao's) or `\"openvino\"` "
         "(OpenVINO's quantiser)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           if (in.has(self.name)) {
             if (!c.integer_cache())
               in.bad(self.name, "applies to integer caches only (kv_cache_dtype is \"" +
                                     std::string(kv_cache_dtype_name(c)) + "\"; u8 or i8 take it)");
             const std::int32_t bits = c.kv_quant.bits;  // kv_cache_dtype's
             c.kv_quant = read_kv_quant(in, c.head_size);
             c.kv_quant.bits = bits;
           }
           if (!c.integer_cache()) return;
           if (const auto rule = quant_rule_conditions(c.kv_quant, c.cache_storage_dtype(), c.head_size))
             in.bad(self.name, *rule);
           if (!in.has(self.name))
             for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
               if (const auto rule = tensor_quant_rule(c.kv_quant.of(t), c.head_size))
                 in.bad(self.name, *rule);
         },
     .write =
         [](const CaseField& self, const Case& c, json& out) {
           if (c.integer_cache()) out[std::string(self.name)] = kv_quant_json(c.kv_quant);
         },
     .equal = same<&Case::kv_quant>,
     .id =
         [](const CaseField&, const Case& c, IdBuilder& id) {
           KVQuant spec = c.kv_quant;
           spec.bits = 8;  // u4 is named by the cache's tag
           if (c.integer_cache() && !(spec == KVQuant{})) id.add(id_text::quant(spec));
         }},
    {.name = "kv_layout",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "`\"vllm\"`",
     .id_doc = "`-nhd`, `-hnd`",
     .doc =
         "`\"vllm\"` (key `[blocks, kv_heads, head_size/x, block_size, x]`, value `[blocks, kv_heads, "
         "head_size, block_size]`), `\"nhd\"` (both `[blocks, block_size, kv_heads, head_size]`: "
         "FlashAttention, FlashInfer's NHD) or `\"hnd\"` (both `[blocks, kv_heads, block_size, head_size]`: "
         "FlashInfer's HND, IPEX)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           const std::string layout = in.string(self.name, "vllm");
           if (!try_parse_kv_layout(layout, c.kv_layout))
             in.bad(self.name, "= \"" + excerpt(layout) + "\": expected \"vllm\", \"nhd\" or \"hnd\"");
           if (c.kv_layout != KVLayout::vllm) return;
           if (c.kv_quant.bits == 4 && c.integer_cache())
             in.bad(self.name,
                    "= \"vllm\": a u4 cache packs pairs of dims, which vLLM's value layout [num_blocks, "
                    "num_kv_heads, head_size, block_size] does not keep together; use \"nhd\" or \"hnd\"");
           const std::int32_t x = vllm_key_x(c.cache_storage_dtype());
           if (c.head_size % x != 0)
             in.bad("head_size", "= " + std::to_string(c.head_size) + " is not a multiple of x = " +
                                     std::to_string(x) + " (the vLLM key-cache layout packs 16 bytes of " +
                                     std::string(dtype_name(c.cache_storage_dtype())) +
                                     "; use kv_layout \"nhd\" or \"hnd\")");
         },
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = kv_layout_name(c.kv_layout); },
     .equal = same<&Case::kv_layout>,
     .id =
         [](const CaseField&, const Case& c, IdBuilder& id) {
           if (c.kv_layout != KVLayout::vllm) id.add(kv_layout_name(c.kv_layout));
         }},
    {.name = "alibi",
     .type = T::boolean,
     .scope = S::attention,
     .group = G::attention,
     .tag = "alibi",
     .doc = "ALiBi with the slopes of the Press et al. recipe (input `alibi_slopes`)",
     .read = read_bool<&Case::alibi>,
     .write = write_value<&Case::alibi>,
     .equal = same<&Case::alibi>,
     .id = tag_unless_default<&Case::alibi>,
     .describe = say_unless_default<&Case::alibi>},
    {.name = "soft_cap",
     .type = T::number,
     .scope = S::attention,
     .group = G::attention,
     .default_text = "0 (off)",
     .tag = "cap",
     .doc = "logits become cap · tanh(logits / cap) (a pao extension)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           c.soft_cap = in.number(self.name, 0.0);
           if (!(c.soft_cap >= 0) || c.soft_cap > std::numeric_limits<float>::max())
             in.bad(self.name, "= " + json_excerpt(in.at(self.name)) + ": must be >= 0 (0 = off)");
         },
     .write = write_value<&Case::soft_cap>,
     .equal = same<&Case::soft_cap>,
     .id =
         [](const CaseField& self, const Case& c, IdBuilder& id) {
           if (c.soft_cap > 0) id.add(self.tag, id_text::number(c.soft_cap));
         },
     .describe =
         [](const CaseField&, const Case& c, std::string& out) {
           if (c.soft_cap <= 0) return;
           std::ostringstream os;
           os << ", soft_cap " << c.soft_cap;
           out += os.str();
         }},
    {.name = "sliding_window",
     .type = T::integer,
     .scope = S::attention,
     .group = G::attention,
     .default_text = "0 (off)",
     .tag = "win",
     .doc = "a query sees the last `sliding_window` positions",
     .read = read_int<&Case::sliding_window>,
     .write = write_value<&Case::sliding_window>,
     .equal = same<&Case::sliding_window>,
     .id = tag_unless_default<&Case::sliding_window>,
     .describe =
         [](const CaseField&, const Case& c, std::string& out) {
           if (c.sliding_window > 0) out += ", window " + std::to_string(c.sliding_window);
         }},
    {.name = "scale",
     .type = T::number,
     .scope = S::attention,
     .group = G::attention,
     .default_text = "1/√head_size",
     .tag = "sc",
     .doc = "multiplies q·k (`null` = default)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           if (in.has(self.name)) c.scale = in.positive(self.name, 1.0);
         },
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = c.scale ? json(*c.scale) : json(nullptr); },
     .equal = same<&Case::scale>,
     .id =
         [](const CaseField& self, const Case& c, IdBuilder& id) {
           if (c.scale) id.add(self.tag, id_text::number(*c.scale));
         }},
    {.name = "k_scale",
     .type = T::number,
     .scope = S::every_kind,
     .group = G::dtypes,
     .fallback = 1,
     .tag = "ks",
     .doc = "fp8 dequantisation of K, value = fp8 × scale (vLLM's per-tensor scale); an integer cache's "
            "scales are tensors of the golden",
     .read = read_scale,
     .write = write_value<&Case::k_scale>,
     .equal = same<&Case::k_scale>,
     .id = tag_scale<&Case::k_scale>},
    {.name = "v_scale",
     .type = T::number,
     .scope = S::every_kind,
     .group = G::dtypes,
     .fallback = 1,
     .tag = "vs",
     .doc = "the same for V",
     .read = read_scale,
     .write = write_value<&Case::v_scale>,
     .equal = same<&Case::v_scale>,
     .id = tag_scale<&Case::v_scale>},
    {.name = "k_head_scales",
     .type = T::numbers,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "—",
     .tag = "khs",
     .doc = "fp8 caches only: per-KV-head scales (`num_kv_heads` numbers) in place of `k_scale` (a pao "
            "extension)",
     .read = read_head_scales,
     .write = write_if_given<&Case::k_head_scales>,
     .equal = same<&Case::k_head_scales>,
     .id = tag_scales<&Case::k_head_scales>},
    {.name = "v_head_scales",
     .type = T::numbers,
     .scope = S::every_kind,
     .group = G::dtypes,
     .default_text = "—",
     .tag = "vhs",
     .doc = "the same for V, in place of `v_scale`",
     .read = read_head_scales,
     .write = write_if_given<&Case::v_head_scales>,
     .equal = same<&Case::v_head_scales>,
     .id = tag_scales<&Case::v_head_scales>},
    {.name = "partition_size",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.partition_size,
     .lo = 1,
     .tag = "p",
     .doc = "V2's partition size, a multiple of `block_size`",
     .read = read_int<&Case::partition_size>,
     .write = write_value<&Case::partition_size>,
     .equal = same<&Case::partition_size>,
     .id = tag_unless_default<&Case::partition_size>},
    {.name = "warp_size",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.warp_size,
     .lo = 1,
     .tag = "w",
     .doc = "the warp of the GPU that the kernel-precision outputs emulate (BI-V100: 64), a power of two",
     .read = read_int<&Case::warp_size>,
     .write = write_value<&Case::warp_size>,
     .equal = same<&Case::warp_size>,
     .id = tag_unless_default<&Case::warp_size>},
    {.name = "threads_per_cta",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.threads_per_cta,
     .lo = 1,
     .tag = "t",
     .doc = "its threads per CTA, a multiple of `warp_size`",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           read_int<&Case::threads_per_cta>(self, in, c);
           // The decode tuning is read: its rules (V2's, the strictest).
           if (const auto v = check_tuning(c, KernelVariant::v2, c.block_size)) {
             // Name the field the case chose: a block_size that does not divide the default partition.
             if (std::string_view(v->field) == "partition_size" && !in.has("partition_size") &&
                 in.has("block_size"))
               in.bad("block_size", "= " + std::to_string(c.block_size) +
                                        " does not divide the default partition_size = " +
                                        std::to_string(c.partition_size) +
                                        " (V2 partitions are whole blocks; set partition_size too)");
             in.bad(v->field, v->rule);
           }
         },
     .write = write_value<&Case::threads_per_cta>,
     .equal = same<&Case::threads_per_cta>,
     .id = tag_unless_default<&Case::threads_per_cta>},
    {.name = "block_m",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.block_m,
     .lo = 1,
     .tag = "m",
     .id_doc = "`-m<block_m>n<block_n>c<context_tile>`",
     .doc =
         "query rows per CTA of the prefix kernel that the kernel-precision output emulates (vLLM's BLOCK_M)",
     .read = read_int<&Case::block_m>,
     .write = write_value<&Case::block_m>,
     .equal = same<&Case::block_m>,
     .id =
         [](const CaseField& self, const Case& c, IdBuilder& id) {
           if (c.block_m != kVllmTuning.block_m || c.block_n != kVllmTuning.block_n ||
               c.context_tile != kVllmTuning.context_tile)
             id.add(self.tag, std::to_string(c.block_m) + "n" + std::to_string(c.block_n) + "c" +
                                  std::to_string(c.context_tile));
         }},
    {.name = "block_n",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.block_n,
     .lo = 1,
     .id_doc = "with `block_m`",
     .doc = "its keys per new-token tile (BLOCK_N)",
     .read = read_int<&Case::block_n>,
     .write = write_value<&Case::block_n>,
     .equal = same<&Case::block_n>},
    {.name = "context_tile",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .fallback = kVllmTuning.context_tile,
     .lo = 1,
     .id_doc = "with `block_m`",
     .doc = "its keys per context tile (TRITON_BLOCK_SIZE)",
     .read = read_int<&Case::context_tile>,
     .write = write_value<&Case::context_tile>,
     .equal = same<&Case::context_tile>},
    {.name = "distribution",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::pool,
     .default_text = "`\"uniform\"`",
     .id_doc = "`-<distribution>`",
     .doc =
         "`uniform` (vLLM's: ±1/√head_size), `large_logits` (±4: peaked softmax), `near_ties` (logits within "
         "a few ulp), `dominant_token`, `all_equal`, `small_integers` (exact arithmetic), `constant` (every "
         "element 1/16, nothing drawn: timing long contexts)",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           const std::string d = in.string(self.name, "uniform");
           try {
             c.distribution = parse_value_distribution(d);
           } catch (const Error& e) {
             in.bad(self.name, std::string("= \"") + excerpt(d) + "\": " + e.what());
           }
         },
     .write = [](const CaseField& self, const Case& c,
                 json& out) { out[std::string(self.name)] = to_string(c.distribution); },
     .equal = same<&Case::distribution>,
     .id =
         [](const CaseField&, const Case& c, IdBuilder& id) {
           if (c.distribution != ValueDistribution::uniform) id.add(to_string(c.distribution));
         }},
    {.name = "num_blocks",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::pool,
     .default_text = "0 = auto",
     .tag = "nb",
     .doc = "blocks in the KV pool (auto: what the sequences need, plus one spare per sequence)",
     .read = read_int<&Case::num_blocks>,
     .write = write_value<&Case::num_blocks>,
     .equal = same<&Case::num_blocks>,
     .id = tag_unless_default<&Case::num_blocks>},
    {.name = "max_query_len",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::tuning,
     .default_text = "0 = longest `query_len`",
     .tag = "mq",
     .doc = "sizes the prefix grid's query-tile dimension (vLLM's `max_input_len`); CTAs past a sequence's "
            "queries still walk its context",
     .read = read_int<&Case::max_query_len>,
     .write = write_unless_default<&Case::max_query_len>,
     .equal = same<&Case::max_query_len>,
     .id = tag_unless_default<&Case::max_query_len>},
    {.name = "cache_new_tokens",
     .type = T::boolean,
     .scope = S::kind_declared,
     .group = G::pool,
     .fallback = 1,
     .tag = "nocache",
     .doc =
         "the new tokens' K/V are written into the cache too, as vLLM does before attention; `false` leaves "
         "their slots NaN",
     .read = read_bool<&Case::cache_new_tokens>,
     .write = write_unless_default<&Case::cache_new_tokens>,
     .equal = same<&Case::cache_new_tokens>,
     .id = tag_unless_default<&Case::cache_new_tokens>},
    {.name = "extra_table_columns",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::pool,
     .fallback = 1,
     .tag = "xc",
     .doc = "block-table columns of garbage past the longest sequence's blocks",
     .read = read_int<&Case::extra_table_columns>,
     .write = write_unless_default<&Case::extra_table_columns>,
     .equal = same<&Case::extra_table_columns>,
     .id = tag_unless_default<&Case::extra_table_columns>},
    {.name = "poison_unused",
     .type = T::boolean,
     .scope = S::every_kind,
     .group = G::pool,
     .fallback = 1,
     .tag = "nopoison",
     .doc = "NaN in every cache slot no token occupies (`false`: 0)",
     .read = read_bool<&Case::poison_unused>,
     .write = write_unless_default<&Case::poison_unused>,
     .equal = same<&Case::poison_unused>,
     .id = tag_unless_default<&Case::poison_unused>},
    {.name = "new_kv_source",
     .type = T::text,
     .scope = S::kind_declared,
     .group = G::attention,
     .default_text = "`\"input\"`",
     .tag = "kvcache",
     .doc =
         "where the kernel reads the new tokens' K/V. `\"input\"`: `key` / `value` as given (vLLM's Triton "
         "`context_attention_fwd`); `\"cache\"`: their slots of the cache, dequantised like the context "
         "(FlashAttention-, FlashInfer- and IPEX-based backends, which run `reshape_and_cache` first). They "
         "differ only for fp8 caches; `\"cache\"` needs `cache_new_tokens`",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           const std::string source = in.string(self.name, "input");
           if (!try_parse_new_kv_source(source, c.new_kv_source))
             in.bad(self.name, "= \"" + excerpt(source) +
                                   "\": expected \"input\" (vLLM's context_attention_fwd) or \"cache\"");
           if (c.new_kv_source == NewKVSource::cache && !c.cache_new_tokens)
             in.bad(self.name,
                    "= \"cache\" reads the new tokens from the cache: it needs cache_new_tokens true");
         },
     .write =
         [](const CaseField& self, const Case& c, json& out) {
           if (c.new_kv_source != NewKVSource::input)
             out[std::string(self.name)] = new_kv_source_name(c.new_kv_source);
         },
     .equal = same<&Case::new_kv_source>,
     .id =
         [](const CaseField& self, const Case& c, IdBuilder& id) {
           if (c.new_kv_source == NewKVSource::cache) id.add(self.tag);
         }},
    {.name = "vllm_faithful",
     .type = T::boolean,
     .scope = S::attention,
     .group = G::attention,
     .tag = "vllmfaithful",
     .doc = "compute what vLLM's own kernels compute: the features they drop are off (see [vLLM "
            "compatibility](#vllm-compatibility))",
     .read =
         [](const CaseField& self, const FieldInput& in, Case& c) {
           c.vllm_faithful = in.boolean(self.name, false);
           if (c.vllm_faithful && c.integer_cache())
             in.bad(self.name, "vLLM's kernels have no integer KV cache: there is no vLLM computation of a " +
                                   std::string(kv_cache_dtype_name(c)) + " case to be faithful to");
         },
     .write = write_unless_default<&Case::vllm_faithful>,
     .equal = same<&Case::vllm_faithful>,
     .id = tag_unless_default<&Case::vllm_faithful>,
     .describe =
         [](const CaseField&, const Case& c, std::string& out) {
           if (c.vllm_faithful) out += ", vLLM-faithful";
         }},
    {.name = "padding_tokens",
     .type = T::integer,
     .scope = S::kind_declared,
     .group = G::lengths,
     .fallback = 2,
     .tag = "pad",
     .doc = "extra rows of `key` / `value` with slot −1 (vLLM's padding tokens), which must not be written",
     .read = read_int<&Case::padding_tokens>,
     .write = write_value<&Case::padding_tokens>,
     .equal = same<&Case::padding_tokens>,
     .id = tag_unless_default<&Case::padding_tokens>},
    {.name = "query_lens",
     .type = T::lengths,
     .scope = S::new_tokens,
     .group = G::lengths,
     .default_text = "required",
     .tag = "q",
     .doc = "new tokens per sequence",
     .write = write_value<&Case::query_lens>,
     .equal = same<&Case::query_lens>,
     .id = [](const CaseField& self, const Case& c,
              IdBuilder& id) { id.add(self.tag, id_text::lengths(c.query_lens)); }},
    {.name = "seq_lens",
     .type = T::lengths,
     .scope = S::every_kind,
     .group = G::lengths,
     .default_text = "drawn from `max_seq_len`",
     .id_doc = "`-l<lengths>`, or `-n<num_seqs>-L<max_seq_len>` when drawn",
     .doc = "decode: tokens per sequence; with new tokens: context + new tokens per sequence",
     .write = write_value<&Case::seq_lens>,
     .equal = same<&Case::seq_lens>,
     .id =
         [](const CaseField&, const Case& c, IdBuilder& id) {
           if (id.seq_lens_given) {
             id.add("l", id_text::lengths(c.seq_lens));
             if (id.max_seq_len_given) id.add("L", std::to_string(c.max_seq_len));
           } else {
             id.add("n", std::to_string(c.num_seqs));
             id.add("L", std::to_string(c.max_seq_len));
           }
         }},
    {.name = "max_seq_len",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::lengths,
     .default_text = "longest `seq_len`",
     .id_doc = "with `seq_lens`",
     .doc =
         "decode: V2's `max_seq_len` (sizes `max_num_partitions`). Given **without** `seq_lens`: the lengths "
         "are drawn as vLLM's test draws them, uniform in [1, max] with the last one = max (with new tokens: "
         "in [query_len, max])",
     .write = write_value<&Case::max_seq_len>,
     .equal = same<&Case::max_seq_len>},
    {.name = "num_seqs",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::lengths,
     .default_text = "`len(seq_lens)`",
     .id_doc = "with `seq_lens`",
     .doc =
         "required when the lengths are drawn; with a one-entry `seq_lens` (or `query_lens`) every sequence "
         "gets that length: `\"num_seqs\": 128, \"seq_lens\": [4096]`",
     .write = write_value<&Case::num_seqs>,
     .equal = same<&Case::num_seqs>},
    {.name = "seed",
     .type = T::integer,
     .scope = S::every_kind,
     .group = G::pool,
     .tag = "s",
     .doc = "every value is drawn from it with pao's own PRNG (the same bits on every platform)",
     .read = [](const CaseField& self, const FieldInput& in, Case& c) { c.seed = in.u64(self.name, 0); },
     .write = write_value<&Case::seed>,
     .equal = same<&Case::seed>,
     .id = [](const CaseField& self, const Case& c,
              IdBuilder& id) { id.add(self.tag, std::to_string(c.seed)); },
     .describe = [](const CaseField&, const Case& c,
                    std::string& out) { out += ", seed " + std::to_string(c.seed); }},
    {.name = "id",
     .type = T::text,
     .scope = S::every_kind,
     .group = G::identity,
     .default_text = "derived",
     .doc = "the golden's name (letters, digits, `-`, `_`, `.`); see [ids](#case-ids)",
     .write = write_value<&Case::id>,
     .equal = same<&Case::id>},
};

std::string join_names(const std::vector<std::string>& names, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? last : ", ";
    out += names[i];
  }
  return out;
}

std::string default_of(const CaseField& f) {
  if (!f.default_text.empty()) return std::string(f.default_text);
  if (f.type == T::boolean) return f.fallback ? "true" : "false";
  return std::to_string(f.fallback);
}

std::string id_of(const CaseField& f) {
  if (!f.id_doc.empty()) return std::string(f.id_doc);
  if (f.id == nullptr) return "";
  if (f.tag.empty()) return "its value";
  return "`-" + std::string(f.tag) + (f.type == T::boolean ? "" : "<value>") + "`";
}

}  // namespace

std::string_view to_string(FieldType t) {
  static constexpr std::string_view kNames[] = {"integer", "number",          "boolean", "string",
                                                "lengths", "list of numbers", "object"};
  return kNames[static_cast<std::size_t>(t)];
}

std::string_view to_string(FieldGroup g) {
  static constexpr std::string_view kNames[] = {"identity", "shape", "dtypes", "attention",
                                                "tuning",   "pool",  "lengths"};
  return kNames[static_cast<std::size_t>(g)];
}

std::span<const CaseField> case_fields() { return kFields; }

const CaseField* find_case_field(std::string_view name) {
  for (const CaseField& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

bool kind_takes(const kinds::KernelKind& kind, const CaseField& field) {
  switch (field.scope) {
    case S::every_kind:
      return true;
    case S::attention:
      return kind.traits().attends;
    case S::new_tokens:
      return kind.traits().new_tokens;
    case S::kind_declared:
      break;
  }
  const auto& own = kind.traits().fields;
  return std::find(own.begin(), own.end(), field.name) != own.end();
}

std::string field_takers(const CaseField& field) {
  std::vector<std::string> takers;
  for (const kinds::KernelKind* k : kinds::kernel_kinds())
    if (kind_takes(*k, field)) takers.emplace_back(k->name());
  if (takers.size() == kinds::kernel_kinds().size()) return "every kind";
  return join_names(takers);
}

std::string case_fields_markdown() {
  std::string out = "| field | type | kinds | default | id tag | meaning |\n|---|---|---|---|---|---|\n";
  for (const CaseField& f : kFields)
    out += "| `" + std::string(f.name) + "` | " + std::string(to_string(f.type)) + " | " + field_takers(f) +
           " | " + default_of(f) + " | " + id_of(f) + " | " + std::string(f.doc) +
           (f.choices != nullptr ? "; one of " + f.choices() : std::string()) + " |\n";
  return out;
}

}  // namespace pao::cases

// pao._pao's kernels on caller memory: decode (V1, V2 with its partials), prefix and the cache
// write. pao/ops.py turns vLLM's argument lists into these calls; here only views are made, the
// GIL released and the outputs copied into the caller's tensors.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "buffer.hpp"
#include "pao/cases/case.hpp"
#include "pao/cases/case_schema.hpp"
#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/kernels/reshape_and_cache.hpp"
#include "pao/layout/paged_cache_layout.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "pao/plan/kernel_tuning.hpp"
#include "pao/plan/partition.hpp"

namespace pao::python {

namespace nb = nanobind;
using OptBuffer = std::optional<Buffer>;

/// An integer cache's quantisation as pao.ops hands it over: kv_quant's words (pao/numerics/
/// kv_quant.hpp) and the caller's scale / zero-point tensors (the writes go into them in place).
struct QuantArgument {
  QuantArgument(std::string key_quant, std::string value_quant, std::string rounding_rule,
                std::string quant_rule, std::int32_t code_bits, Buffer k_scale, Buffer k_zero_point,
                Buffer v_scale, Buffer v_zero_point)
      : key(std::move(key_quant)),
        value(std::move(value_quant)),
        rounding(std::move(rounding_rule)),
        rule(std::move(quant_rule)),
        bits(code_bits),
        key_scale(std::move(k_scale)),
        key_zero_point(std::move(k_zero_point)),
        value_scale(std::move(v_scale)),
        value_zero_point(std::move(v_zero_point)) {}
  std::string key, value, rounding, rule;
  std::int32_t bits = 8;
  Buffer key_scale, key_zero_point, value_scale, value_zero_point;
};

namespace {

/// The kernels' KVQuantArgs of `q` (views of the caller's tensors; their dtypes are the spec's).
KVQuantArgs quant_args(const QuantArgument& q) {
  KVQuantArgs a;
  const auto tensor_quant = [](const std::string& text, const char* which) {
    const std::optional<TensorQuant> t = parse_tensor_quant(text);
    require(t.has_value(), "kv_quant.", which, ": '", text, "' (expected by_token, by_channel or group_<G>)");
    return *t;
  };
  a.spec.key = tensor_quant(q.key, "key");
  a.spec.value = tensor_quant(q.value, "value");
  const std::optional<QuantRounding> rounding = parse_rounding(q.rounding);
  require(rounding.has_value(), "kv_quant.rounding: '", q.rounding, "' (expected half_even or half_away)");
  a.spec.rounding = *rounding;
  const std::optional<QuantRule> rule = parse_rule(q.rule);
  require(rule.has_value(), "kv_quant.rule: '", q.rule, "' (expected minmax_zero or openvino)");
  a.spec.rule = *rule;
  require(q.bits == 8 || q.bits == 4, "kv_quant: ", q.bits, " bits (8, or 4 for u4)");
  a.spec.bits = q.bits;
  a.spec.scale_dtype = q.key_scale.dtype();
  a.spec.zero_point_dtype = q.key_zero_point.dtype();
  a.key_scale = q.key_scale.view();
  a.key_zero_point = q.key_zero_point.view();
  a.value_scale = q.value_scale.view();
  a.value_zero_point = q.value_zero_point.view();
  return a;
}

void set_quant(AttentionOptions& o, const std::optional<QuantArgument>& kv_quant) {
  if (kv_quant) o.kv_quant = quant_args(*kv_quant);
}

Precision parse_precision(const std::string& p) {
  if (p == "kernel") return Precision::kernel;
  if (p == "exact") return Precision::exact;
  fail("precision: '", p, "' (expected \"kernel\" or \"exact\")");
}

KVLayout parse_layout(const std::string& name) {
  KVLayout layout{};
  require(try_parse_kv_layout(name, layout), "kv_layout: '", name, "' (expected vllm, nhd or hnd)");
  return layout;
}

/// The paged cache both attention kernels read.
void set_paged_kv(PagedKVArgs& args, const Buffer& key_cache, const Buffer& value_cache,
                  const std::string& kv_layout, const Buffer& block_tables, const Buffer& seq_lens) {
  args.key_cache = key_cache.view();
  args.value_cache = value_cache.view();
  args.kv_layout = parse_layout(kv_layout);
  args.block_tables = block_tables.view();
  args.seq_lens = seq_lens.view();
}

/// The options both attention kernels take.
AttentionOptions attention_options(const OptBuffer& alibi_slopes, float scale, float k_scale, float v_scale,
                                   std::int32_t sliding_window, float soft_cap) {
  AttentionOptions o;
  o.scale = scale;
  o.k_scale = k_scale;
  o.v_scale = v_scale;
  if (alibi_slopes) o.alibi_slopes = alibi_slopes->view();
  o.sliding_window = sliding_window;
  o.soft_cap = soft_cap;
  return o;
}

void decode(const std::string& kernel, const Buffer& out, const OptBuffer& exp_sums,
            const OptBuffer& max_logits, const OptBuffer& tmp_out, const Buffer& query,
            const Buffer& key_cache, const Buffer& value_cache, const std::string& kv_layout,
            const Buffer& block_tables, const Buffer& seq_lens, std::int32_t max_seq_len,
            std::int32_t partition_size, const OptBuffer& alibi_slopes, float scale, float k_scale,
            float v_scale, std::int32_t sliding_window, float soft_cap, const std::string& precision,
            std::int32_t warp_size, std::int32_t threads_per_cta,
            const std::optional<QuantArgument>& kv_quant) {
  DecodeArgs args;
  args.query = query.view();
  set_paged_kv(args, key_cache, value_cache, kv_layout, block_tables, seq_lens);
  args.max_seq_len = max_seq_len;
  args.options = attention_options(alibi_slopes, scale, k_scale, v_scale, sliding_window, soft_cap);
  set_quant(args.options, kv_quant);
  KernelTuning tuning;
  tuning.partition_size = partition_size;
  tuning.warp_size = warp_size;
  tuning.threads_per_cta = threads_per_cta;
  const Precision p = parse_precision(precision);
  require(kernel == "v1" || kernel == "v2", "kernel: '", kernel, "' (expected v1 or v2)");
  DecodeOutputs o;
  {
    nb::gil_scoped_release release;
    o = kernel == "v1" ? paged_attention_v1(args, p, tuning) : paged_attention_v2(args, p, tuning);
  }
  out.assign(o.out);
  if (kernel == "v2") {
    if (tmp_out) tmp_out->assign(o.tmp_out);
    if (max_logits) max_logits->assign(o.max_logits);
    if (exp_sums) exp_sums->assign(o.exp_sums);
  }
}

void prefix(const Buffer& out, const Buffer& query, const Buffer& key, const Buffer& value,
            const Buffer& key_cache, const Buffer& value_cache, const std::string& kv_layout,
            const Buffer& block_tables, const Buffer& seq_lens, const Buffer& query_start_loc,
            std::int32_t max_query_len, const OptBuffer& alibi_slopes, float scale, float k_scale,
            float v_scale, std::int32_t sliding_window, float soft_cap, const std::string& new_kv_source,
            std::int32_t block_m, std::int32_t block_n, std::int32_t context_tile,
            const std::string& precision, const std::optional<QuantArgument>& kv_quant) {
  PrefixArgs args;
  args.query = query.view();
  args.key = key.view();
  args.value = value.view();
  set_paged_kv(args, key_cache, value_cache, kv_layout, block_tables, seq_lens);
  args.query_start_loc = query_start_loc.view();
  args.max_query_len = max_query_len;
  args.options = attention_options(alibi_slopes, scale, k_scale, v_scale, sliding_window, soft_cap);
  set_quant(args.options, kv_quant);
  require(try_parse_new_kv_source(new_kv_source, args.new_kv_source), "new_kv_source: '", new_kv_source,
          "' (expected input or cache)");
  KernelTuning tuning;
  tuning.block_m = block_m;
  tuning.block_n = block_n;
  tuning.context_tile = context_tile;
  const Precision p = parse_precision(precision);
  PrefixOutputs o;
  {
    nb::gil_scoped_release release;
    o = prefix_attention(args, p, tuning);
  }
  out.assign(o.out);
}

void write_cache(const Buffer& key, const Buffer& value, const Buffer& key_cache, const Buffer& value_cache,
                 const Buffer& slot_mapping, const std::string& kv_layout, float k_scale, float v_scale,
                 const std::optional<QuantArgument>& kv_quant) {
  AttentionOptions scales;
  scales.k_scale = k_scale;
  scales.v_scale = v_scale;
  set_quant(scales, kv_quant);
  const KVLayout layout = parse_layout(kv_layout);
  nb::gil_scoped_release release;
  reshape_and_cache_into(key.view(), value.view(), key_cache.view(), value_cache.view(), slot_mapping.view(),
                         layout, scales);
}

/// (num_blocks, num_kv_heads, block_size) a value cache of `kv_layout` declares (layout/paged_cache_layout).
std::tuple<std::int64_t, std::int64_t, std::int64_t> value_cache_dims(
    const std::string& kv_layout, const std::vector<std::int64_t>& shape) {
  const KVLayout layout = parse_layout(kv_layout);
  const std::size_t rank = cache_shape(layout, CacheTensor::value, 1, 1, 16, 16, DType::f16).size();
  require(shape.size() == rank, "value_cache: shape ", shape_to_string(shape), ", expected ",
          cache_shape_doc(layout, CacheTensor::value), " (kv_layout ", kv_layout, ")");
  const CacheDims d = cache_dims(layout, CacheTensor::value, shape);
  return {d.num_blocks, d.num_kv_heads, d.block_size};
}

}  // namespace

void bind_ops(nb::module_& m) {
  nb::class_<Buffer>(
      m, "Buffer", "A CPU array viewed with a pao dtype (no copy); made by pao._tensors.buffer, not by hand.")
      .def(nb::init<nb::ndarray<nb::ro, nb::device::cpu>, const std::string&, const std::string&>(),
           nb::arg("array"), nb::arg("dtype"), nb::arg("name"))
      .def_prop_ro("name", &Buffer::name);
  nb::class_<QuantArgument>(
      m, "KVQuant", "An integer cache's kv_quant and its scale / zero-point tensors (made by pao.ops).")
      .def(nb::init<std::string, std::string, std::string, std::string, std::int32_t, Buffer, Buffer, Buffer,
                    Buffer>(),
           nb::arg("key"), nb::arg("value"), nb::arg("rounding"), nb::arg("rule"), nb::arg("bits"),
           nb::arg("key_scale"), nb::arg("key_zero_point"), nb::arg("value_scale"),
           nb::arg("value_zero_point"));
  m.def("decode", &decode, nb::arg("kernel"), nb::arg("out"), nb::arg("exp_sums").none(),
        nb::arg("max_logits").none(), nb::arg("tmp_out").none(), nb::arg("query"), nb::arg("key_cache"),
        nb::arg("value_cache"), nb::arg("kv_layout"), nb::arg("block_tables"), nb::arg("seq_lens"),
        nb::arg("max_seq_len"), nb::arg("partition_size"), nb::arg("alibi_slopes").none(), nb::arg("scale"),
        nb::arg("k_scale"), nb::arg("v_scale"), nb::arg("sliding_window"), nb::arg("soft_cap"),
        nb::arg("precision"), nb::arg("warp_size"), nb::arg("threads_per_cta"), nb::arg("kv_quant").none(),
        "Paged attention V1 or V2 into `out` (and V2's partials), in kernel or exact precision.");
  m.def("prefix", &prefix, nb::arg("out"), nb::arg("query"), nb::arg("key"), nb::arg("value"),
        nb::arg("key_cache"), nb::arg("value_cache"), nb::arg("kv_layout"), nb::arg("block_tables"),
        nb::arg("seq_lens"), nb::arg("query_start_loc"), nb::arg("max_query_len"),
        nb::arg("alibi_slopes").none(), nb::arg("scale"), nb::arg("k_scale"), nb::arg("v_scale"),
        nb::arg("sliding_window"), nb::arg("soft_cap"), nb::arg("new_kv_source"), nb::arg("block_m"),
        nb::arg("block_n"), nb::arg("context_tile"), nb::arg("precision"), nb::arg("kv_quant").none(),
        "K-tiled prefix (chunked-prefill) attention into `out`.");
  m.def("value_cache_dims", &value_cache_dims, nb::arg("kv_layout"), nb::arg("shape"),
        "(num_blocks, num_kv_heads, block_size) of a value cache of that layout and shape.");
  m.def("write_cache", &write_cache, nb::arg("key"), nb::arg("value"), nb::arg("key_cache"),
        nb::arg("value_cache"), nb::arg("slot_mapping"), nb::arg("kv_layout"), nb::arg("k_scale"),
        nb::arg("v_scale"), nb::arg("kv_quant").none(),
        "reshape_and_cache: key / value into the caches (an integer cache's scales and zero points too), in "
        "place.");
  // The case schema (pao/cases/case_schema.hpp): every case field with its type, kinds, default
  // and doc line; the tuning group's defaults (vLLM's) are default_tuning. Python restates none.
  nb::list fields;
  nb::dict tuning;
  for (const cases::CaseField& f : cases::case_fields()) {
    nb::dict row;
    row["name"] = std::string(f.name);
    row["type"] = std::string(cases::to_string(f.type));
    row["group"] = std::string(cases::to_string(f.group));
    row["kinds"] = cases::field_takers(f);
    row["default"] = f.default_text.empty() ? nb::cast(f.fallback) : nb::cast(std::string(f.default_text));
    row["doc"] = std::string(f.doc);
    fields.append(row);
    if (f.group == cases::FieldGroup::tuning && f.default_text.empty())
      tuning[nb::str(f.name.data(), f.name.size())] = f.fallback;
  }
  m.attr("case_fields") = fields;
  m.attr("default_tuning") = tuning;
  // An integer cache's default quantisation words (pao/numerics/kv_quant.hpp: OpenVINO's layout).
  const KVQuant openvino;
  nb::dict quant;
  quant["key"] = to_string(openvino.key);
  quant["value"] = to_string(openvino.value);
  quant["rounding"] = std::string(rounding_name(openvino.rounding));
  quant["rule"] = std::string(rule_name(openvino.rule));
  m.attr("default_kv_quant") = quant;
  m.def(
      "max_num_partitions",
      [](std::int32_t max_seq_len, std::int32_t partition_size) {
        require(partition_size > 0, "partition_size = ", partition_size, ": must be positive");
        return max_num_partitions(max_seq_len, partition_size);
      },
      nb::arg("max_seq_len"), nb::arg("partition_size"),
      "V2's max_num_partitions: ceil(max_seq_len / partition_size), at least 1.");
  // The dtype table (pao/core/dtype.hpp): what Python maps framework dtypes with.
  nb::list dtypes;
  for (const DTypeInfo& d : kDTypes) {
    nb::dict row;
    row["name"] = std::string(d.name);
    row["array_name"] = std::string(d.array_name);
    row["bytes"] = static_cast<int>(d.bytes);
    row["numpy_native"] = d.numpy_native;
    dtypes.append(row);
  }
  m.attr("dtypes") = dtypes;
  m.def(
      "parse_kv_cache_dtype",
      [](const std::string& text) {
        return std::string(cases::kv_cache_dtype_name(cases::parse_kv_cache_dtype(text)));
      },
      nb::arg("kv_cache_dtype"), "vLLM's kv_cache_dtype string as a pao dtype name, or \"auto\".");
}

}  // namespace pao::python

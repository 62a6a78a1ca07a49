// One golden against one ACTUAL: which outputs are there, their references and policies, and
// the optional oracle reduce of the vendor's V2 partials (pao/diff/diff.hpp).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/cache_write.hpp"
#include "pao/diff/diagnose.hpp"
#include "pao/diff/diff.hpp"
#include "pao/diff/golden_view.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/layout/openvino_cache.hpp"
#include "pao/numerics/element.hpp"

namespace pao::diff {

namespace fs = std::filesystem;
using cases::CaseKernel;

namespace {

using Judged = kinds::OutputSpec::Judged;

/// A final attention output of the kind (out, v1.out, v2.out, prefix.out): judged against out_exact.
bool is_final_output(const kinds::KernelKind& kind, std::string_view name) {
  const kinds::OutputSpec* spec = kind.output(name);
  return spec != nullptr && spec->judged == Judged::final_output;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += ", ";
    s += x;
  }
  return s;
}

/// The comparable outputs of a kind (all but the exact reference), in report order.
std::vector<std::string> comparable_outputs(const kinds::KernelKind& kind) {
  std::vector<std::string> out;
  for (const auto& o : kind.traits().outputs)
    if (o.judged != Judged::exact_reference && o.judged != Judged::cache) out.emplace_back(o.name);
  return out;
}

Tensor as_f32(const Tensor& t) {
  if (t.dtype() == DType::f32) return Tensor::copy_of(t.view());
  Tensor out(DType::f32, t.shape());
  const auto values = t.to_f64();
  encode_from_f64(DType::f32, values.data(), out.bytes(), values.size());
  return out;
}

/// The oracle's kernel-precision values a vendor's `name` is measured against. A vendor's `out`
/// may come from any of the kind's kernels (V1 or V2): each of their outputs.
std::vector<const std::vector<double>*> kernel_references(const GoldenView& g, const kinds::KernelKind& kind,
                                                          const std::string& name) {
  if (name == kReduceName) return {&g.values("v2.out")};  // the reduce of V2's partials
  if (name != "out") return {&g.values(name)};
  std::vector<const std::vector<double>*> refs;
  for (const auto& o : kind.traits().outputs)
    if (o.judged == Judged::final_output && o.name != "out") refs.push_back(&g.values(std::string(o.name)));
  return refs;
}

Policy policy_for(const std::string& name, DType golden_dtype, const DiffOptions& options) {
  // The oracle's reduce of the vendor's partials is judged like v2.out, with v2.out's overrides
  // and then its own.
  const std::string key = name == kReduceName ? "v2.out" : name;
  Policy p = apply_overrides(default_policy(key, golden_dtype), key, options.overrides);
  if (key != name) p = apply_overrides(p, name, options.overrides);
  return p;
}

void run_reduce(CaseReport& rep, const cases::Case& gc, const GoldenView& g, const CaseGeometry& geo,
                const golden::TensorFile& actual, const std::map<std::string, std::string>& present,
                const DiffOptions& options) {
  if (!kinds::kind_of(gc).partitioned()) {
    rep.notes.push_back("--reduce applies to cases with V2 partitions (decode) only");
    return;
  }
  for (const char* n : {"v2.tmp_out", "v2.max_logits", "v2.exp_sums"}) {
    if (!present.count(n)) {
      rep.notes.push_back("--reduce needs v2.tmp_out, v2.max_logits and v2.exp_sums in ACTUAL; " +
                          std::string(n) + " is missing");
      return;
    }
  }
  const Tensor tmp_out = actual.read(present.at("v2.tmp_out"), gc.dtype);
  const Tensor max_logits = as_f32(actual.read(present.at("v2.max_logits")));
  const Tensor exp_sums = as_f32(actual.read(present.at("v2.exp_sums")));
  for (const auto* t : {&tmp_out, &max_logits, &exp_sums}) {
    const std::string name = t == &tmp_out      ? "v2.tmp_out"
                             : t == &max_logits ? "v2.max_logits"
                                                : "v2.exp_sums";
    if (t->shape() != g.tensor(name).shape()) {
      rep.notes.push_back("--reduce skipped: " + name + " has the wrong shape");
      return;
    }
  }
  ReduceArgs args;
  args.tmp_out = tmp_out;
  args.max_logits = max_logits;
  args.exp_sums = exp_sums;
  args.seq_lens = g.tensor("seq_lens");
  const DecodeOutputs reduced = paged_attention_v2_reduce(args, Precision::kernel, gc);

  CompareInput in;
  in.name = kReduceName;
  in.actual_name = "the oracle's reduce of ACTUAL's v2.tmp_out, v2.max_logits, v2.exp_sums";
  in.reference = "out_exact";
  in.geometry = &geo;
  in.layout = OutputLayout::seq_head_dim;
  in.actual = &reduced.out;
  in.expected = &g.values("out_exact");
  in.golden_shape = g.tensor("out").shape();
  in.golden_dtype = g.tensor("out").dtype();
  in.policy = policy_for(kReduceName, in.golden_dtype, options);
  in.kernels = kernel_references(g, kinds::kind_of(gc), kReduceName);
  in.rounded = &g.values("out");
  rep.tensors.push_back(compare_tensor(in));
  const bool reduce_ok = rep.tensors.back().passed;

  const TensorReport* vendor = nullptr;
  for (const auto& t : rep.tensors)
    if (t.name == "v2.out" || (t.name == "out" && !vendor)) vendor = &t;
  if (!reduce_ok) {
    rep.reduce_verdict =
        "partial-kernel bug: the oracle's reduce of the vendor's partials fails too, so the partials are "
        "wrong";
  } else if (vendor && !vendor->passed) {
    rep.reduce_verdict =
        "reduce-kernel bug: the vendor's partials reduce correctly in the oracle, but the vendor's " +
        vendor->name + " fails";
  } else {
    rep.reduce_verdict =
        vendor ? "partials and reduce both agree with the oracle"
               : "the vendor's partials reduce correctly (ACTUAL has no v2.out or out to check)";
  }
}

/// A vendor whose V2 partitions differently (another partition_size) writes partials with another
/// partition count: they cannot be compared element by element. Says so, drops them from
/// `present`, and returns the names dropped (none: the partials are comparable); `out` is still
/// compared.
std::vector<std::string> drop_other_partitioning(CaseReport& rep, const cases::Case& gc, const GoldenView& g,
                                                 const golden::TensorFile& actual,
                                                 std::map<std::string, std::string>& present) {
  if (!kinds::kind_of(gc).partitioned()) return {};
  const std::int64_t golden_partitions = cases::max_num_partitions(gc);
  std::int64_t vendor_partitions = -1;
  for (const char* n : {"v2.tmp_out", "v2.max_logits", "v2.exp_sums"}) {
    if (!present.count(n)) continue;
    const Shape shape = actual.read(present.at(n)).shape();
    const Shape& want = g.tensor(n).shape();
    if (shape.size() != want.size() || shape.size() < 3)
      return {};  // a shape error: compare_tensor reports it
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != 2 && shape[d] != want[d]) return {};
    if (shape[2] == golden_partitions) return {};
    vendor_partitions = shape[2];
  }
  if (vendor_partitions < 0) return {};
  std::ostringstream note;
  note << "ACTUAL's partials hold " << vendor_partitions << " partitions per (seq, head), the golden's "
       << golden_partitions << " (partition_size " << gc.partition_size << ", max_seq_len " << gc.max_seq_len
       << "): the vendor partitions V2 differently, so its partials are not compared, only its final "
          "outputs. To compare them, write goldens with the vendor's partition size: pao golden "
          "--partition-size N";
  rep.notes.push_back(note.str());
  std::vector<std::string> dropped;
  for (const char* n : {"v2.tmp_out", "v2.max_logits", "v2.exp_sums"})
    if (present.erase(n) > 0) dropped.emplace_back(n);
  return dropped;
}

/// A required output ACTUAL lacks, as a failing tensor: never a pass.
TensorReport absent_output(const std::string& name, const std::string& why) {
  TensorReport t;
  t.name = name;
  t.actual_name = name;
  t.passed = false;
  t.problem = "absent from ACTUAL: " + why;
  return t;
}

/// Attention outputs: a final output must be there; the ones the verdict does without are listed.
void account_absent_outputs(CaseReport& rep, const kinds::KernelKind& kind,
                            const std::map<std::string, std::string>& present,
                            const std::vector<std::string>& dropped_partials) {
  std::vector<std::string> finals;
  for (const auto& name : comparable_outputs(kind))
    if (is_final_output(kind, name)) finals.push_back(name);
  const bool any_final =
      std::any_of(finals.begin(), finals.end(), [&](const auto& n) { return present.count(n); });
  if (!any_final)
    rep.tensors.push_back(absent_output(
        finals.front(), "no final output (" + join(finals) +
                            ") in ACTUAL, only intermediates: the attention's result was not checked"));
  for (const auto& name : comparable_outputs(kind)) {
    if (present.count(name)) continue;
    if (std::find(dropped_partials.begin(), dropped_partials.end(), name) != dropped_partials.end()) continue;
    // `out` is whichever kernel's final output the vendor wrote: never missing on its own.
    if (is_final_output(kind, name) &&
        (name == finals.front() || present.count(finals.front()) || !any_final))
      continue;
    rep.not_compared.push_back(name);
  }
  for (const auto& name : dropped_partials) rep.not_compared.push_back(name + " (another partitioning)");
}

/// A cache-writing kind's written caches, bit for bit (diff/cache_write.hpp), an integer cache's
/// scales and zero points too; each one ACTUAL lacks fails as absent. Returns whether ACTUAL holds
/// any of them (an attending kind's diff then does without its attention outputs).
bool diff_cache_write(CaseReport& rep, const kinds::KernelKind& kind, const cases::Case& gc,
                      const GoldenView& g, const golden::TensorFile& actual) {
  const bool attends = kind.traits().attends;
  const auto& inputs = golden::golden_input_names(gc.kernel);
  if (!attends)  // an attending kind's diff notes the names it does not know
    for (const auto& name : actual.names())
      if (!kind.output(name) && std::find(inputs.begin(), inputs.end(), name) == inputs.end())
        rep.notes.push_back("ignored '" + name + "': a " + std::string(kind.name()) +
                            " case compares key_cache and value_cache" +
                            (gc.integer_cache() ? " with their scales and zero points" : ""));
  // A cache in OpenVINO's bytes (scales and zero points inline, pao/layout/openvino_cache.hpp):
  // read back as codes, scales and zero points, each judged as pao's own tensors.
  std::map<std::string, Tensor> from_bytes;
  for (const CacheTensor which : {CacheTensor::key, CacheTensor::value}) {
    const std::string name = which == CacheTensor::key ? "key_cache" : "value_cache";
    if (!gc.integer_cache() || gc.kv_layout != KVLayout::hnd || !actual.has(name)) continue;
    const Tensor& golden = g.tensor(name);
    const TensorQuant& tq = gc.kv_quant.of(which);
    const std::optional<Shape> bytes_shape =
        openvino_cache_shape(tq, gc.cache_storage_dtype(), gc.kv_quant.scale_dtype, gc.kv_quant.bits,
                             golden.size(0), gc.num_kv_heads, gc.head_size, gc.block_size);
    const Tensor vendor = actual.read(name);
    // Only a cache that cannot be pao's own (its shape is not the golden's) and comes without its
    // param tensors: where the two layouts' shapes coincide (u4 by token with head_size 16), pao's wins.
    const bool own_params = actual.has(std::string(quant_param_name(which, false))) ||
                            actual.has(std::string(quant_param_name(which, true)));
    if (!bytes_shape || vendor.dtype() != DType::u8 || vendor.shape() != *bytes_shape ||
        vendor.shape() == golden.shape() || own_params)
      continue;
    SplitIntegerCache split =
        unpack_openvino_cache(vendor, tq, gc.kv_quant.bits, gc.head_size, gc.block_size, name);
    from_bytes[name] = std::move(split.codes);
    from_bytes[std::string(quant_param_name(which, false))] = std::move(split.scale);
    from_bytes[std::string(quant_param_name(which, true))] = std::move(split.zero_point);
    rep.notes.push_back(name + ": read in OpenVINO's u8 byte layout " + shape_to_string(*bytes_shape) +
                        " (scales and zero points inline), judged as codes, scales and zero points");
  }
  const auto has = [&](const std::string& name) { return actual.has(name) || from_bytes.count(name); };
  const auto vendor_tensor = [&](const std::string& name, std::optional<DType> as) {
    if (const auto it = from_bytes.find(name); it != from_bytes.end())
      return Tensor::copy_of(it->second.view());
    return as ? actual.read(name, *as) : actual.read(name);
  };
  std::vector<std::string> names;
  for (const CacheTensor which : {CacheTensor::key, CacheTensor::value}) {
    const bool key = which == CacheTensor::key;
    const std::string name = key ? "key_cache" : "value_cache";
    if (!has(name)) continue;
    const Tensor vendor = vendor_tensor(name, g.tensor(name).dtype());
    CacheWriteInput in;
    in.golden_case = &gc;
    in.which = which;
    in.actual_name = name;
    in.source = &g.tensor(key ? "key" : "value");
    in.slot_mapping = &g.tensor("slot_mapping");
    in.before = &g.tensor(key ? "key_cache_before" : "value_cache_before");
    in.expected = &g.tensor(name);
    in.actual = &vendor;
    in.block_tables = &g.tensor("block_tables");
    in.seq_lens = &g.tensor("seq_lens");
    rep.tensors.push_back(compare_cache_write(in));
    names.push_back(name);
  }
  if (gc.integer_cache())
    for (const CacheTensor which : {CacheTensor::key, CacheTensor::value})
      for (const bool zp : {false, true}) {
        const std::string name(quant_param_name(which, zp));
        if (!has(name)) continue;
        const Tensor vendor = vendor_tensor(name, std::nullopt);
        QuantParamWriteInput in;
        in.golden_case = &gc;
        in.which = which;
        in.zero_point = zp;
        in.actual_name = name;
        in.slot_mapping = &g.tensor("slot_mapping");
        in.before = &g.tensor(name + "_before");
        in.expected = &g.tensor(name);
        in.actual = &vendor;
        rep.tensors.push_back(compare_quant_param_write(in));
        names.push_back(name);
      }
  if (names.empty() && !attends)
    fail(actual.path().string(), ": holds none of the outputs of a ", kind.name(),
         " case (key_cache, value_cache); it has: ", join(actual.names()));
  std::vector<std::string> expected = {"key_cache", "value_cache"};
  if (gc.integer_cache())
    for (const CacheTensor which : {CacheTensor::key, CacheTensor::value})
      for (const bool zp : {false, true}) expected.emplace_back(quant_param_name(which, zp));
  for (const std::string& name : expected)
    if (std::find(names.begin(), names.end(), name) == names.end())
      rep.tensors.push_back(absent_output(
          name, "the " + name.substr(0, name.find('_')) +
                    " cache's write was not checked: a cache write writes " +
                    (gc.integer_cache() ? "both caches, their scales and zero points" : "both caches")));
  return !names.empty();
}

/// The most telling verdict among the failing tensors (pattern.hpp's specificity; the first on
/// a tie) is the case's cause.
void name_cause(CaseReport& rep) {
  for (const auto& t : rep.tensors) {
    if (t.passed || !t.problem.empty()) continue;
    if (rep.cause_tensor.empty() || specificity(t.verdict.pattern) > specificity(rep.cause.pattern)) {
      rep.cause = t.verdict;
      rep.cause_tensor = t.name;
    }
  }
}

std::string dtype_path_of(const cases::Case& c) {
  std::string path(dtype_name(c.dtype));
  if (c.fp8_cache()) path += " with an " + std::string(dtype_name(c.cache_storage_dtype())) + " cache";
  return path;
}

}  // namespace

std::string canonical_output_name(std::string_view name, CaseKernel kernel) {
  for (const auto& o : kinds::kind_of(kernel).traits().outputs) {
    if (o.judged == Judged::exact_reference) continue;  // the golden's own reference, not a vendor's output
    if (o.name == name || std::find(o.aliases.begin(), o.aliases.end(), name) != o.aliases.end())
      return std::string(o.name);
  }
  return "";
}

std::int64_t CaseReport::passed_count() const {
  if (!error.empty()) return 0;
  return std::count_if(tensors.begin(), tensors.end(), [](const TensorReport& t) { return t.passed; });
}

std::int64_t CaseReport::failed_count() const {
  if (not_run) return 0;
  if (!error.empty()) return 1;
  return std::count_if(tensors.begin(), tensors.end(), [](const TensorReport& t) { return !t.passed; });
}

std::int64_t CaseReport::compared_count() const {
  if (!error.empty() || not_run) return 0;
  return std::count_if(tensors.begin(), tensors.end(),
                       [](const TensorReport& t) { return t.problem.empty(); });
}

std::int64_t DiffReport::compared() const {
  std::int64_t n = 0;
  for (const auto& c : cases) n += c.compared_count();
  return n;
}

std::int64_t DiffReport::not_compared() const {
  std::int64_t n = 0;
  for (const auto& c : cases) n += static_cast<std::int64_t>(c.not_compared.size());
  return n;
}

std::int64_t DiffReport::passed() const {
  std::int64_t n = 0;
  for (const auto& c : cases) n += c.passed_count();
  return n;
}

std::int64_t DiffReport::failed() const {
  std::int64_t n = 0;
  for (const auto& c : cases) n += c.failed_count();
  return n;
}

std::int64_t DiffReport::not_run() const {
  return std::count_if(cases.begin(), cases.end(), [](const CaseReport& c) { return c.not_run; });
}

CaseReport diff_case(const fs::path& golden_path, const fs::path& actual_path, const DiffOptions& options) {
  const golden::TensorFile golden_file = golden::TensorFile::open(golden_path);
  // A bad golden fails before ACTUAL is opened.
  if (options.check_invariants) golden::require_golden_invariants(golden_file);  // unsound: no bound
  DiffOptions checked = options;
  checked.check_invariants = false;
  return diff_case(golden_file, golden::TensorFile::open(actual_path), checked);
}

CaseReport diff_case(const golden::TensorFile& golden_file, const golden::TensorFile& actual,
                     const DiffOptions& options) {
  return diff_case(GoldenView(golden_file), actual, options);
}

CaseReport diff_case(const GoldenView& g, const golden::TensorFile& actual, const DiffOptions& options) {
  const golden::TensorFile& golden_file = g.file();
  if (options.check_invariants) golden::require_golden_invariants(golden_file);  // unsound: no bound
  const cases::Case& gc = g.golden_case();
  const fs::path& golden_path = golden_file.path();
  const fs::path& actual_path = actual.path();
  CaseReport rep;
  rep.case_id = gc.id;
  rep.description = cases::describe(gc);
  rep.golden = golden_path;
  rep.actual = actual_path;
  rep.dtype_path = dtype_path_of(gc);
  const kinds::KernelKind& kind = kinds::kind_of(gc);
  const bool wrote = kind.writes_cache() && diff_cache_write(rep, kind, gc, g, actual);
  if (!kind.traits().attends) {  // its outputs are the caches it writes
    name_cause(rep);
    return rep;
  }
  const CaseGeometry geo =
      CaseGeometry::make(gc, g.tensor("block_tables"), g.tensor("seq_lens"),
                         kind.traits().new_tokens ? &g.tensor("query_start_loc") : nullptr);

  std::map<std::string, std::string> present;  // canonical name -> name in ACTUAL
  const auto& inputs = golden::golden_input_names(gc.kernel);
  for (const auto& name : actual.names()) {
    const std::string canonical = canonical_output_name(name, gc.kernel);
    const kinds::OutputSpec* spec = canonical.empty() ? nullptr : kind.output(canonical);
    if (spec && spec->judged == Judged::cache) continue;  // diff_cache_write's
    if (canonical.empty()) {
      const bool known = name == "out_exact" || std::find(inputs.begin(), inputs.end(), name) != inputs.end();
      if (!known)
        rep.notes.push_back("ignored '" + name + "': not an output of a " + cases::to_string(gc.kernel) +
                            " case");
      continue;
    }
    auto [it, inserted] = present.emplace(canonical, name);
    if (!inserted)
      rep.notes.push_back("ignored '" + name + "': '" + it->second + "' already provides " + canonical);
  }
  if (present.empty() && !wrote) {
    std::vector<std::string> vllm_names;  // the partials' vLLM argument names
    for (const auto& o : kind.traits().outputs)
      if (o.judged == Judged::partial && !o.aliases.empty()) vllm_names.emplace_back(o.aliases.front());
    fail(actual_path.string(), ": holds none of the outputs of a ", kind.name(), " case (",
         join(comparable_outputs(kind)), vllm_names.empty() ? "" : "; or " + join(vllm_names),
         "); it has: ", join(actual.names()));
  }

  const std::vector<std::string> dropped_partials = drop_other_partitioning(rep, gc, g, actual, present);
  const bool other_partitioning = !dropped_partials.empty();
  std::optional<golden::GoldenTensors> whole_golden;  // read once, only to name a failure
  for (const auto& name : comparable_outputs(kind)) {
    if (!present.count(name)) continue;
    const Tensor& golden_tensor = g.tensor(name);
    const Tensor vendor = actual.read(present.at(name), golden_tensor.dtype());
    CompareInput in;
    in.name = name;
    in.actual_name = present.at(name);
    in.geometry = &geo;
    in.layout = layout_of(name, gc.kernel);
    in.actual = &vendor;
    in.golden_shape = golden_tensor.shape();
    in.golden_dtype = golden_tensor.dtype();
    in.policy = policy_for(name, in.golden_dtype, options);
    if (in.policy.rule == Rule::bitwise) {
      in.expected = &g.values(name);
      in.reference = name + (g.recomputed(name) ? " recomputed from the golden's inputs" : " of the golden");
    } else if (is_final_output(kind, name)) {
      in.expected = &g.values("out_exact");
      in.rounded = &g.values("out");
      in.reference =
          g.recomputed("out_exact") ? "out_exact (recomputed: the golden leaves it out)" : "out_exact";
    } else if (in.policy.rule == Rule::flash) {
      in.reference = "the exact V2's " + name.substr(3) + " (recomputed from the golden's inputs)";
      in.expected = &g.exact_partial(name);
    } else {
      in.expected = &g.values(name);
      in.reference = name + (g.recomputed(name) ? " recomputed from the golden's inputs (kernel precision)"
                                                : " of the golden (kernel precision)");
    }
    if (in.policy.rule == Rule::flash) in.kernels = kernel_references(g, kind, name);
    rep.tensors.push_back(compare_tensor(in));
    TensorReport& t = rep.tensors.back();
    if (!t.passed && t.policy.rule == Rule::flash && t.problem.empty()) {
      // What the failure matches instead: a final output, the oracle with a convention changed (a
      // scale ignored, the window ignored, ...); any tensor, a constant ratio.
      std::optional<Verdict> named;
      if (is_final_output(kind, name)) {
        if (!whole_golden) whole_golden = golden::read_golden(golden_file);
        named = diagnose_output(*whole_golden, t, vendor);
      } else {
        named = uniform_ratio_verdict(vendor.to_f64(), *in.expected);
      }
      if (named) {
        named->detail += "; by location: " + to_string(t.verdict.pattern) + " — " + t.verdict.detail;
        t.verdict = *named;
      }
    }
    if (vendor.dtype() != golden_tensor.dtype() && is_floating(vendor.dtype())) {
      const std::string what = name + ": ACTUAL's dtype is " + std::string(dtype_name(vendor.dtype())) +
                               ", the golden's " + std::string(dtype_name(golden_tensor.dtype()));
      if (options.allow_dtype_mismatch) {
        rep.notes.push_back(what + " (compared as values: --allow-dtype-mismatch)");
      } else {
        // A kernel that writes another dtype than vLLM's is wrong for its callers, however close.
        TensorReport& t = rep.tensors.back();
        t.passed = false;
        t.problem = "dtype " + std::string(dtype_name(vendor.dtype())) + " differs from the golden's " +
                    std::string(dtype_name(golden_tensor.dtype())) +
                    " (--allow-dtype-mismatch compares the values, e.g. f32 copies saved by a harness)";
      }
    }
  }
  if (options.reduce && other_partitioning) {
    rep.notes.push_back("--reduce skipped: the vendor's partials use another partitioning");
  } else if (options.reduce) {
    run_reduce(rep, gc, g, geo, actual, present, options);
  }
  account_absent_outputs(rep, kind, present, dropped_partials);
  const std::vector<std::string> incompatible = cases::vllm_incompatibilities(gc);
  if (!incompatible.empty() && !gc.vllm_faithful)
    for (const auto& reason : incompatible) rep.notes.push_back("not what vLLM computes: " + reason);
  name_cause(rep);
  return rep;
}

}  // namespace pao::diff

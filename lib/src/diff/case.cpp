// One golden against one ACTUAL: which outputs are there, their references and policies, and
// the optional oracle reduce of the vendor's V2 partials (pao/diff/diff.hpp).
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/diff/cache_write.hpp"
#include "pao/diff/diagnose.hpp"
#include "pao/diff/diff.hpp"
#include "pao/golden/invariants.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/numerics/element.hpp"

namespace pao::diff {

namespace fs = std::filesystem;
using cases::CaseKernel;

namespace {

bool is_final_output(std::string_view name) {
  return name == "out" || name == "v1.out" || name == "v2.out" || name == "prefix.out";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += ", ";
    s += x;
  }
  return s;
}

/// The comparable outputs of a kernel, in report order.
std::vector<std::string> comparable_outputs(CaseKernel kernel) {
  std::vector<std::string> out;
  for (const auto& n : golden::golden_output_names(kernel))
    if (n != "out_exact") out.push_back(n);
  return out;
}

Tensor as_f32(const Tensor& t) {
  if (t.dtype() == DType::f32) return Tensor::copy_of(t.view());
  Tensor out(DType::f32, t.shape());
  const auto values = t.to_f64();
  encode_from_f64(DType::f32, values.data(), out.bytes(), values.size());
  return out;
}

/// The exact partials of the last golden diffed: `pao audit` diffs one golden against many
/// vendors in a row, and the exact V2 costs more than the comparison.
std::mutex exact_memo_mutex;
std::string exact_memo_key;
std::map<std::string, std::vector<double>> exact_memo;

std::map<std::string, std::vector<double>> last_exact_partials(const cases::Case& c) {
  std::lock_guard lock(exact_memo_mutex);
  return exact_memo_key == cases::case_to_json(c) ? exact_memo : std::map<std::string, std::vector<double>>{};
}

void remember_exact_partials(const cases::Case& c,
                             const std::map<std::string, std::vector<double>>& partials) {
  std::lock_guard lock(exact_memo_mutex);
  exact_memo_key = cases::case_to_json(c);
  exact_memo = partials;
}

/// Reads golden tensors on demand, and the kernel-precision errors against out_exact.
class GoldenView {
 public:
  explicit GoldenView(const golden::TensorFile& file) : file_(file) {}

  const Tensor& tensor(const std::string& name) {
    auto it = cache_.find(name);
    if (it != cache_.end()) return it->second;
    if (!file_.has(name) && recompute_outputs(name)) return cache_.at(name);
    require(file_.has(name), file_.path().string(), ": the golden has no tensor '", name, "'");
    return cache_.emplace(name, file_.read(name)).first->second;
  }
  /// Whether `name` was left out of the file (`pao golden --outputs`) and recomputed.
  bool recomputed(const std::string& name) const { return recomputed_.count(name) > 0; }
  const std::vector<double>& values(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    return values_.emplace(name, tensor(name).to_f64()).first->second;
  }
  /// The exact V2's partials ("v2.tmp_out", "v2.max_logits", "v2.exp_sums"), each rounded once,
  /// recomputed from the golden's inputs the first time one is asked for.
  const std::vector<double>& exact_partial(const std::string& name, const cases::Case& c) {
    if (exact_partials_.empty()) exact_partials_ = last_exact_partials(c);
    if (exact_partials_.empty()) {
      cases::DecodeCase dc = golden::decode_case_of(golden::read_golden(file_));
      dc.spec = c;
      const DecodeOutputs o = paged_attention_v2(dc.args(), Precision::exact, cases::kernel_config(c));
      exact_partials_["v2.tmp_out"] = o.tmp_out.to_f64();
      exact_partials_["v2.max_logits"] = o.max_logits.to_f64();
      exact_partials_["v2.exp_sums"] = o.exp_sums.to_f64();
      remember_exact_partials(c, exact_partials_);
    }
    return exact_partials_.at(name);
  }

 private:
  /// An output the file leaves out: every missing output, computed from the golden's inputs
  /// once. False if `name` is not an output.
  bool recompute_outputs(const std::string& name) {
    const auto& outputs = golden::golden_output_names(golden::golden_case_of(file_).kernel);
    if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) return false;
    const golden::GoldenTensors stored = golden::read_golden(file_, false);
    for (auto& [n, t] : golden::compute_outputs(stored, golden::missing_outputs(stored))) {
      recomputed_.insert(n);
      cache_.insert_or_assign(n, std::move(t));
    }
    return cache_.count(name) > 0;
  }

  const golden::TensorFile& file_;
  std::set<std::string> recomputed_;
  std::map<std::string, Tensor> cache_;
  std::map<std::string, std::vector<double>> values_;
  std::map<std::string, std::vector<double>> exact_partials_;
};

/// The oracle's kernel-precision values a vendor's `name` is measured against. A vendor's `out`
/// may come from V1 or V2: both.
std::vector<const std::vector<double>*> kernel_references(GoldenView& g, CaseKernel kernel,
                                                          const std::string& name) {
  if (name == "out" && kernel == CaseKernel::prefix) return {&g.values("prefix.out")};
  if (name == "out") return {&g.values("v1.out"), &g.values("v2.out")};
  if (name == kReduceName) return {&g.values("v2.out")};
  return {&g.values(name)};
}

Policy policy_for(const std::string& name, DType golden_dtype, const DiffOptions& options) {
  // The oracle's reduce of the vendor's partials is judged like v2.out, with v2.out's overrides
  // and then its own.
  const std::string key = name == kReduceName ? "v2.out" : name;
  Policy p = apply_overrides(default_policy(key, golden_dtype), key, options.overrides);
  if (key != name) p = apply_overrides(p, name, options.overrides);
  return p;
}

void run_reduce(CaseReport& rep, const cases::Case& gc, GoldenView& g, const CaseGeometry& geo,
                const golden::TensorFile& actual, const std::map<std::string, std::string>& present,
                const DiffOptions& options) {
  if (gc.kernel != CaseKernel::decode) {
    rep.notes.push_back("--reduce applies to decode cases only");
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
  args.partition_size = gc.partition_size;
  const DecodeOutputs reduced = paged_attention_v2_reduce(args, Precision::kernel, cases::kernel_config(gc));

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
  in.kernels = kernel_references(g, gc.kernel, kReduceName);
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
/// `present`, and returns true; `out` is still compared.
bool drop_other_partitioning(CaseReport& rep, const cases::Case& gc, GoldenView& g,
                             const golden::TensorFile& actual, std::map<std::string, std::string>& present) {
  if (gc.kernel != CaseKernel::decode) return false;
  const std::int64_t golden_partitions = cases::max_num_partitions(gc);
  std::int64_t vendor_partitions = -1;
  for (const char* n : {"v2.tmp_out", "v2.max_logits", "v2.exp_sums"}) {
    if (!present.count(n)) continue;
    const Shape shape = actual.read(present.at(n)).shape();
    const Shape& want = g.tensor(n).shape();
    if (shape.size() != want.size() || shape.size() < 3)
      return false;  // a shape error: compare_tensor reports it
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != 2 && shape[d] != want[d]) return false;
    if (shape[2] == golden_partitions) return false;
    vendor_partitions = shape[2];
  }
  if (vendor_partitions < 0) return false;
  std::ostringstream note;
  note << "ACTUAL's partials hold " << vendor_partitions << " partitions per (seq, head), the golden's "
       << golden_partitions << " (partition_size " << gc.partition_size << ", max_seq_len " << gc.max_seq_len
       << "): the vendor partitions V2 differently, so its partials are not compared, only its final "
          "outputs. To compare them, write goldens with the vendor's partition size: pao golden "
          "--partition-size N";
  rep.notes.push_back(note.str());
  for (const char* n : {"v2.tmp_out", "v2.max_logits", "v2.exp_sums"}) present.erase(n);
  return true;
}

/// reshape_and_cache: the vendor's written caches, bit for bit (diff/cache_write.hpp).
void diff_cache_write(CaseReport& rep, const cases::Case& gc, GoldenView& g,
                      const golden::TensorFile& actual) {
  std::vector<std::string> names;
  const auto& inputs = golden::golden_input_names(gc.kernel);
  for (const auto& name : actual.names())
    if (name != "key_cache" && name != "value_cache" &&
        std::find(inputs.begin(), inputs.end(), name) == inputs.end())
      rep.notes.push_back("ignored '" + name +
                          "': a reshape_and_cache case compares key_cache and value_cache");
  for (const CacheTensor which : {CacheTensor::key, CacheTensor::value}) {
    const bool key = which == CacheTensor::key;
    const std::string name = key ? "key_cache" : "value_cache";
    if (!actual.has(name)) continue;
    const Tensor vendor = actual.read(name, g.tensor(name).dtype());
    CacheWriteInput in;
    in.golden_case = &gc;
    in.which = which;
    in.actual_name = name;
    in.source = &g.tensor(key ? "key" : "value");
    in.slot_mapping = &g.tensor("slot_mapping");
    in.before = &g.tensor(key ? "key_cache_before" : "value_cache_before");
    in.expected = &g.tensor(name);
    in.actual = &vendor;
    rep.tensors.push_back(compare_cache_write(in));
    names.push_back(name);
  }
  if (names.empty())
    fail(actual.path().string(),
         ": holds none of the outputs of a reshape_and_cache case (key_cache, value_cache); it has: ",
         join(actual.names()));
}

}  // namespace

std::string canonical_output_name(std::string_view name, CaseKernel kernel) {
  if (kernel == CaseKernel::reshape_and_cache)
    return name == "key_cache" || name == "value_cache" ? std::string(name) : "";
  if (name == "out" || name == "output" || name == "o") return "out";  // o: context_attention_fwd's
  if (kernel == CaseKernel::prefix) return name == "prefix.out" ? "prefix.out" : "";
  if (name == "v1.out" || name == "v2.out") return std::string(name);
  if (name == "exp_sum") return "v2.exp_sums";  // paged_attention_v2's argument name
  for (const char* partial : {"tmp_out", "max_logits", "exp_sums"}) {
    if (name == partial || name == "v2." + std::string(partial)) return "v2." + std::string(partial);
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
  const cases::Case gc = golden::golden_case_of(golden_file);
  if (options.check_invariants) golden::require_golden_invariants(golden_file);  // unsound: no bound
  GoldenView g(golden_file);
  CaseReport rep;
  rep.case_id = gc.id;
  rep.description = cases::describe(gc);
  rep.golden = golden_path;
  rep.actual = actual_path;
  if (gc.kernel == CaseKernel::reshape_and_cache) {
    diff_cache_write(rep, gc, g, golden::TensorFile::open(actual_path));
    return rep;
  }
  const CaseGeometry geo =
      CaseGeometry::make(gc, g.tensor("block_tables"), g.tensor("seq_lens"),
                         gc.kernel == CaseKernel::prefix ? &g.tensor("query_start_loc") : nullptr);

  const golden::TensorFile actual = golden::TensorFile::open(actual_path);
  std::map<std::string, std::string> present;  // canonical name -> name in ACTUAL
  const auto& inputs = golden::golden_input_names(gc.kernel);
  for (const auto& name : actual.names()) {
    const std::string canonical = canonical_output_name(name, gc.kernel);
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
  if (present.empty())
    fail(actual_path.string(), ": holds none of the outputs of a ", cases::to_string(gc.kernel), " case (",
         join(comparable_outputs(gc.kernel)),
         gc.kernel == CaseKernel::decode ? "; or tmp_out, max_logits, exp_sums" : "",
         "); it has: ", join(actual.names()));

  const bool other_partitioning = drop_other_partitioning(rep, gc, g, actual, present);
  std::optional<golden::GoldenTensors> whole_golden;  // read once, only to name a failure
  for (const auto& name : comparable_outputs(gc.kernel)) {
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
    if (is_final_output(name)) {
      in.expected = &g.values("out_exact");
      in.rounded = &g.values("out");
      in.reference =
          g.recomputed("out_exact") ? "out_exact (recomputed: the golden leaves it out)" : "out_exact";
    } else if (in.policy.rule == Rule::flash) {
      in.reference = "the exact V2's " + name.substr(3) + " (recomputed from the golden's inputs)";
      in.expected = &g.exact_partial(name, gc);
    } else {
      in.expected = &g.values(name);
      in.reference = name + (g.recomputed(name) ? " recomputed from the golden's inputs (kernel precision)"
                                                : " of the golden (kernel precision)");
    }
    if (in.policy.rule == Rule::flash) in.kernels = kernel_references(g, gc.kernel, name);
    rep.tensors.push_back(compare_tensor(in));
    TensorReport& t = rep.tensors.back();
    if (!t.passed && t.policy.rule == Rule::flash && t.problem.empty()) {
      // What the failure matches instead: a final output, the oracle with a convention changed (a
      // scale ignored, the window ignored, ...); any tensor, a constant ratio.
      std::optional<Verdict> named;
      if (is_final_output(name)) {
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
  if (present.empty() && other_partitioning)
    rep.error = "ACTUAL holds only partials of another partitioning: nothing to compare";
  const std::vector<std::string> incompatible = cases::vllm_incompatibilities(gc);
  if (!incompatible.empty() && !gc.vllm_faithful)
    for (const auto& reason : incompatible) rep.notes.push_back("not what vLLM computes: " + reason);
  return rep;
}

}  // namespace pao::diff

// The invariants of attention, checked on a golden (pao/golden/invariants.hpp).
#include "pao/golden/invariants.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

#include "kernels/common/paged_kv.hpp"
#include "pao/cases/cache_values.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/kernels/logits.hpp"
#include "pao/kernels/reshape_and_cache.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/numerics/element.hpp"
#include "pao/numerics/kv_quant.hpp"
#include "pao/numerics/ulp.hpp"
#include "pao/plan/partition.hpp"

namespace pao::golden {

namespace {

using cases::Case;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

/// A tensor and its values, read once.
struct Values {
  std::string name;
  Tensor tensor;
  std::vector<double> v;
  double at(std::int64_t i) const { return v[static_cast<std::size_t>(i)]; }
};

class Checker {
  /// The V rows of one (sequence, KV head): per-dimension range, largest |v|, largest ||k||.
  struct Range {
    std::vector<double> lo, hi;
    double max_abs = 0;
    double max_key_norm = 0;  // max ||k|| over the same rows
    std::int32_t rows = 0;
  };

 public:
  Checker(const TensorFile& file, std::size_t max_violations)
      : file_(file), c_(golden_case_of(file)), kind_(kinds::kind_of(c_)), max_(max_violations) {}

  InvariantReport run() {
    read_lengths();
    if (c_.integer_cache()) check_codes();
    if (c_.integer_cache() && kind_.traits().attends) check_quant_params();
    if (kind_.writes_cache()) {  // outputs of its own: the caches it writes
      report_.cache_write = true;
      check_cache_write();
      if (!kind_.traits().attends) return finish();
    }
    const Shape out_shape{c_.num_tokens(), c_.num_heads, c_.head_size};
    // A golden written with --outputs holds some outputs only: those are checked, against the
    // exact output recomputed from the inputs when the file leaves out_exact out.
    std::vector<Values> kernels;  // the oracle's kernel-precision outputs (v1.out, v2.out, prefix.out)
    bool partials = false;
    for (const auto& o : kind_.traits().outputs) {
      const std::string name(o.name);
      if (o.judged == kinds::OutputSpec::Judged::final_output && name != "out" && file_.has(name))
        kernels.push_back(load(name, out_shape));
      partials = partials || (o.judged == kinds::OutputSpec::Judged::partial && file_.has(name));
    }
    if (kernels.empty() && !partials && !file_.has("out") && !file_.has("out_exact")) return finish();
    report_.exact_recomputed = !file_.has("out_exact");
    exact_ = report_.exact_recomputed ? recomputed_exact() : load("out_exact", out_shape);
    std::optional<Values> out;
    if (file_.has("out")) out = load("out", out_shape);
    if (!report_.ok()) return finish();  // shapes first: nothing else is meaningful without them

    if (out) check_rounding(*out);
    value_ranges();
    for (const auto& k : kernels) check_kernel(k);
    if (partials) check_partials();
    return finish();
  }

 private:
  /// reshape_and_cache, write_and_attend: the caches after (an integer cache's scales and zero
  /// points too) are the caches before with vLLM's write applied, bit for bit (recomputed here with
  /// pao::reshape_and_cache).
  void check_cache_write() {
    const Tensor key = file_.read("key"), value = file_.read("value"), slots = file_.read("slot_mapping");
    Tensor key_after = file_.read("key_cache_before"), value_after = file_.read("value_cache_before");
    std::vector<std::pair<std::string, Tensor*>> written_tensors = {{"key_cache", &key_after},
                                                                    {"value_cache", &value_after}};
    cases::QuantParamTensors params;  // an integer cache's, before and then after the write
    if (c_.integer_cache())
      for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
        for (const bool zp : {false, true}) {
          const std::string name(quant_param_name(t, zp));
          params.param(t, zp) = file_.read(name + "_before");
          written_tensors.emplace_back(name, &params.param(t, zp));
        }
    try {
      reshape_and_cache(key, value, key_after, value_after, slots, c_.kv_layout,
                        cases::attention_options(c_, {}, params));
    } catch (const Error& e) {
      violation("slot_mapping", "",
                std::string("shapes: reshape_and_cache refuses the golden's inputs: ") + e.what());
      return;
    }
    for (const auto& [name, after] : written_tensors) {
      const Tensor golden = file_.read(name);
      const Tensor& written = *after;
      if (golden.dtype() != written.dtype() || golden.shape() != written.shape()) {
        violation(name, "",
                  "shapes: " + std::string(dtype_name(golden.dtype())) + " " +
                      shape_to_string(golden.shape()) + ", the cache before the write " +
                      std::string(dtype_name(written.dtype())) + " " + shape_to_string(written.shape()));
        continue;
      }
      // Bit for bit: a cache write has no rounding freedom (the diff's verdict names a vendor's
      // pattern; a golden's own cache either is the write or is corrupt).
      const std::size_t size = dtype_size(golden.dtype());
      std::int64_t differ = 0, first = -1;
      for (std::int64_t i = 0; i < golden.numel(); ++i) {
        if (std::memcmp(golden.bytes() + i * static_cast<std::int64_t>(size),
                        written.bytes() + i * static_cast<std::int64_t>(size), size) == 0)
          continue;
        if (differ++ == 0) first = i;
      }
      report_.elements_checked += golden.numel();
      if (differ > 0)
        violation(name, shape_to_string(index_of_flat(golden.shape(), first)),
                  "cache write: " + std::to_string(differ) + " element(s) differ from " + name +
                      "_before with reshape_and_cache applied (the first at this index)");
    }
  }

  /// An integer cache's codes lie in their dtype's range (u4 0..15 in a byte each, u8 0..255,
  /// i8 -128..127): a code outside it decodes to a value no quantiser writes, yet the range of the
  /// storage dtype hides it from every other check (a u4 code of 200 is a valid byte).
  void check_codes() {
    const CodeRange range = code_range(c_.cache_storage_dtype(), c_.kv_quant.bits);
    for (const char* name : {"key_cache", "value_cache", "key_cache_before", "value_cache_before"}) {
      if (!file_.has(name)) continue;
      const Tensor t = file_.read(name);
      const std::vector<double> codes = t.to_f64();
      std::int64_t outside = 0, first = -1;
      for (std::size_t i = 0; i < codes.size(); ++i)
        if (!(codes[i] >= range.lo && codes[i] <= range.hi) && outside++ == 0)
          first = static_cast<std::int64_t>(i);
      report_.elements_checked += t.numel();
      if (outside > 0)
        violation(name, shape_to_string(index_of_flat(t.shape(), first)),
                  "codes: " + std::to_string(outside) + " code(s) outside [" + num(range.lo) + ", " +
                      num(range.hi) + "], the range of the case's " +
                      std::string(cases::kv_cache_dtype_name(c_)) + " cache (the first, " +
                      num(codes[static_cast<std::size_t>(first)]) + ", at this index)");
    }
  }

  /// The scales and zero points the attention reads (the cache rows value_ranges reads): each as
  /// the kernels check it before reading (PagedKV::check_quant_params, the rule pao diff applies to
  /// the golden's inputs): a scale finite and positive, a zero point an integer of the code range
  /// (any finite value under the openvino rule).
  void check_quant_params() {
    const Tensor key_cache = file_.read("key_cache"), value_cache = file_.read("value_cache");
    const Tensor block_tables = file_.read("block_tables");
    cases::QuantParamTensors q;
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      for (const bool zp : {false, true}) q.param(t, zp) = file_.read(std::string(quant_param_name(t, zp)));
    std::optional<detail::PagedKV> kv;
    try {
      kv = detail::make_paged_kv(key_cache.view(), value_cache.view(), c_.kv_layout, block_tables.view(),
                                 c_.num_seqs, c_.num_kv_heads, c_.head_size, c_.dtype,
                                 cases::attention_options(c_, {}, q));
    } catch (const Error& e) {
      violation("key_cache", "", std::string("shapes: the kernels refuse the golden's cache: ") + e.what());
      return;
    }
    const bool new_from_input = kind_.traits().new_tokens && features_.new_kv_source == NewKVSource::input;
    for (std::int32_t s = 0; s < c_.num_seqs; ++s) {
      const std::int32_t len = c_.seq_lens[static_cast<std::size_t>(s)];
      const std::int32_t cached = new_from_input ? c_.context_len(static_cast<std::size_t>(s)) : len;
      // Blocks first (value_ranges reports a bad one): a parameter is read only where one is valid.
      const std::int32_t used = (cached + c_.block_size - 1) / c_.block_size;
      bool blocks_ok = used <= kv->max_blocks_per_seq;
      for (std::int32_t b = 0; blocks_ok && b < used; ++b)
        blocks_ok = kv->block_table(s)[b] >= 0 && kv->block_table(s)[b] < kv->num_blocks;
      if (!blocks_ok) continue;
      try {
        kv->check_quant_params(s, cached);
      } catch (const Error& e) {
        // "value_cache_scale element 128 (sequence 0, ...) = nan: a scale must be ..."
        const std::string what = e.what();
        const std::size_t space = what.find(' ');
        violation(what.substr(0, space), "",
                  "quantisation: " + (space == std::string::npos ? what : what.substr(space + 1)));
      }
    }
  }

  void violation(const std::string& tensor, const std::string& index, const std::string& what) {
    ++report_.violation_count;
    if (report_.violations.size() < max_) report_.violations.push_back({tensor, index, what});
  }

  Values load(const std::string& name, const Shape& shape) {
    require(file_.has(name), file_.path().string(), ": the golden has no tensor '", name, "'");
    Values x{name, file_.read(name), {}};
    if (x.tensor.shape() != shape) {
      violation(
          name, "",
          "shape: " + shape_to_string(x.tensor.shape()) + ", the case implies " + shape_to_string(shape));
      return x;
    }
    x.v = x.tensor.to_f64();
    return x;
  }

  /// out_exact as make_golden computes it, from the golden's inputs.
  Values recomputed_exact() {
    auto computed = compute_outputs(read_golden(file_, false), {"out_exact"});
    Values x{"out_exact", std::move(computed.at(0).second), {}};
    x.v = x.tensor.to_f64();
    return x;
  }

  void read_lengths() {
    const Tensor seq_lens = file_.read("seq_lens");
    if (seq_lens.shape() != Shape{c_.num_seqs}) {
      violation("seq_lens", "",
                "shape: " + shape_to_string(seq_lens.shape()) + ", the case has " +
                    std::to_string(c_.num_seqs) + " sequences");
      return;
    }
    for (std::int32_t s = 0; s < c_.num_seqs; ++s)
      if (seq_lens.view().i32_at({s}) != c_.seq_lens[static_cast<std::size_t>(s)])
        violation("seq_lens", "[" + std::to_string(s) + "]",
                  "shapes: " + std::to_string(seq_lens.view().i32_at({s})) + ", the case's seq_len is " +
                      std::to_string(c_.seq_lens[static_cast<std::size_t>(s)]));
    if (token_rows_) {
      const auto start = c_.query_start_locs();
      first_row_.assign(start.begin(), start.end());
    }
  }

  /// "[i, h, d] (seq s, head h, dim d)" or, for prefix, "(token t of seq s, ...)".
  std::string index(std::int64_t row, std::int32_t head, std::int32_t dim) const {
    std::string s =
        "[" + std::to_string(row) + ", " + std::to_string(head) + ", " + std::to_string(dim) + "] (";
    if (!token_rows_) {
      s += "seq " + std::to_string(row);
    } else {
      const std::int32_t seq = seq_of_row(row);
      s += "token " + std::to_string(row - first_row_[static_cast<std::size_t>(seq)]) + " of seq " +
           std::to_string(seq);
    }
    return s + ", head " + std::to_string(head) + ", dim " + std::to_string(dim) + ")";
  }

  static std::string partition_index(std::int32_t s, std::int32_t h, std::int32_t p) {
    std::ostringstream os;
    os << '[' << s << ", " << h << ", " << p << "] (seq " << s << ", head " << h << ", partition " << p
       << ')';
    return os.str();
  }

  std::int32_t seq_of_row(std::int64_t row) const {
    if (!token_rows_) return static_cast<std::int32_t>(row);
    const auto it = std::upper_bound(first_row_.begin(), first_row_.end(), row);
    return static_cast<std::int32_t>(it - first_row_.begin()) - 1;
  }

  std::int64_t flat(std::int64_t row, std::int32_t head, std::int32_t dim) const {
    return (row * c_.num_heads + head) * c_.head_size + dim;
  }

  void check_rounding(const Values& out) {
    const DType dtype = out.tensor.dtype();
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(exact_.v.size()); ++i) {
      ++report_.elements_checked;
      const double e = exact_.at(i), o = out.at(i);
      const std::int64_t row = i / (std::int64_t{c_.num_heads} * c_.head_size);
      const auto head = static_cast<std::int32_t>(i / c_.head_size % c_.num_heads);
      const auto dim = static_cast<std::int32_t>(i % c_.head_size);
      if (!std::isfinite(e)) {
        violation("out_exact", index(row, head, dim), "finite: " + num(e));
      } else if (round_to_dtype(dtype, e) != o && !(std::isnan(o) && std::isnan(round_to_dtype(dtype, e)))) {
        violation("out", index(row, head, dim),
                  "rounding: " + num(o) + " is not out_exact " + num(e) + " rounded once to " +
                      std::string(dtype_name(dtype)) + " (" + num(round_to_dtype(dtype, e)) + ")");
      }
    }
  }

  /// Per (sequence, KV head): the range of every dimension over the sequence's V rows, and the
  /// largest |V|; then out_exact's convexity.
  void value_ranges() {
    const Tensor value_cache = file_.read("value_cache");
    const Tensor key_cache = file_.read("key_cache");
    cases::QuantParamTensors q;
    if (c_.integer_cache())
      for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
        for (const bool zp : {false, true}) q.param(t, zp) = file_.read(std::string(quant_param_name(t, zp)));
    const cases::CacheValues keys(c_, CacheTensor::key, key_cache, &q.key_scale, &q.key_zero_point);
    const cases::CacheValues values(c_, CacheTensor::value, value_cache, &q.value_scale, &q.value_zero_point);
    std::vector<double> new_keys;
    const bool new_tokens = kind_.traits().new_tokens;  // their K / V are inputs of their own
    if (new_tokens) new_keys = file_.read("key").to_f64();
    const Tensor block_tables = file_.read("block_tables");
    const std::int64_t num_blocks = value_cache.size(0);
    std::vector<double> new_values;  // prefix: the unquantised new tokens [num_tokens, num_kv_heads, D]
    if (new_tokens) new_values = file_.read("value").to_f64();
    const std::int32_t D = c_.head_size;
    ranges_.assign(static_cast<std::size_t>(c_.num_seqs) * c_.num_kv_heads, {});
    for (std::int32_t s = 0; s < c_.num_seqs; ++s) {
      const std::int32_t len = c_.seq_lens[static_cast<std::size_t>(s)];
      // The rows the kernel reads from the cache: every token (decode, or new_kv_source cache),
      // else the context; the new tokens then come from key / value.
      const bool new_from_input = new_tokens && features_.new_kv_source == NewKVSource::input;
      const std::int32_t cached = new_from_input ? c_.context_len(static_cast<std::size_t>(s)) : len;
      for (std::int32_t g = 0; g < c_.num_kv_heads; ++g) {
        Range& r = range(s, g);
        r.lo.assign(static_cast<std::size_t>(D), kInf);
        r.hi.assign(static_cast<std::size_t>(D), -kInf);
        r.rows = len;
        auto add_key = [&](double norm_sq) { r.max_key_norm = std::max(r.max_key_norm, std::sqrt(norm_sq)); };
        auto add = [&](std::int32_t d, double v) {
          r.lo[static_cast<std::size_t>(d)] = std::min(r.lo[static_cast<std::size_t>(d)], v);
          r.hi[static_cast<std::size_t>(d)] = std::max(r.hi[static_cast<std::size_t>(d)], v);
          r.max_abs = std::max(r.max_abs, std::fabs(v));
        };
        for (std::int32_t t = 0; t < cached; ++t) {
          if (t / c_.block_size >= block_tables.size(1)) break;
          const std::int32_t block = block_tables.view().i32_at({s, t / c_.block_size});
          if (block < 0 || block >= num_blocks) {
            if (g == 0)
              violation("block_tables",
                        "[" + std::to_string(s) + ", " + std::to_string(t / c_.block_size) + "]",
                        "shapes: block id " + std::to_string(block) + " outside the cache's " +
                            std::to_string(num_blocks) + " blocks");
            break;
          }
          double norm_sq = 0;
          for (std::int32_t d = 0; d < D; ++d) {
            add(d, values.at(block, g, t % c_.block_size, d));
            const double k = keys.at(block, g, t % c_.block_size, d);
            norm_sq += k * k;
          }
          add_key(norm_sq);
        }
        if (new_from_input)
          for (std::int64_t row = first_row_[static_cast<std::size_t>(s)];
               row < first_row_[static_cast<std::size_t>(s) + 1]; ++row) {
            double norm_sq = 0;
            for (std::int32_t d = 0; d < D; ++d) {
              const auto i = static_cast<std::size_t>((row * c_.num_kv_heads + g) * D + d);
              add(d, new_values[i]);
              norm_sq += new_keys[i] * new_keys[i];
            }
            add_key(norm_sq);
          }
      }
    }
    // Convexity. The exact output's own f64 rounding: at most (rows + 2) ulps of max |V|.
    for (std::int64_t row = 0; row < exact_.tensor.size(0); ++row) {
      const std::int32_t s = seq_of_row(row);
      for (std::int32_t h = 0; h < c_.num_heads; ++h) {
        const Range& r = range(s, c_.kv_head_of(h));
        const double tol = (r.rows + 2) * 0x1p-52 * r.max_abs;
        for (std::int32_t d = 0; d < D; ++d) {
          const double e = exact_.at(flat(row, h, d));
          if (!std::isfinite(e)) continue;  // reported by check_rounding
          if (r.rows == 0) {
            if (e != 0)
              violation("out_exact", index(row, h, d),
                        "convexity: " + num(e) + " for an empty sequence (must be 0)");
            continue;
          }
          const double lo = r.lo[static_cast<std::size_t>(d)], hi = r.hi[static_cast<std::size_t>(d)];
          if (e < lo - tol || e > hi + tol)
            violation("out_exact", index(row, h, d),
                      "convexity: " + num(e) + " outside [" + num(lo) + ", " + num(hi) +
                          "], the range of dim " + std::to_string(d) + " over the V rows of seq " +
                          std::to_string(s) + ", kv head " + std::to_string(c_.kv_head_of(h)));
        }
      }
    }
  }

  /// The a-priori bound of a kernel-precision output row (docs/golden.md, "Golden integrity"):
  /// M (4u + 2^-20 + 4 delta), delta = 2^-24 ((D + 2) scale |q| max|k| + |slope| len + soft_cap)
  /// bounds the fp32 error of one logit (its dot product, ALiBi bias and soft-cap); f32 decode over
  /// fp8 adds vLLM's rounding of K and V through half.
  double kernel_bound(double u, const Range& r, std::int64_t row, std::int32_t head) const {
    double q_sq = 0;
    for (std::int32_t d = 0; d < c_.head_size; ++d) {
      const double q = query_[static_cast<std::size_t>(flat(row, head, d))];
      q_sq += q * q;
    }
    const double slope = alibi_.empty() ? 0.0 : std::fabs(alibi_[static_cast<std::size_t>(head)]);
    const double scale = cases::effective_scale(c_);
    // f32 decode over fp8: where vLLM's half2 path rounds the dequantised K or V to half
    // (fp8_dequant_through_half), 2^-11 relative, 2^-25 absolute where the half is subnormal.
    const auto [k_half, v_half] = kind_.dequant_through_half(c_);
    double ku = k_half ? 0x1p-11 : 0.0, ka = k_half ? 0x1p-25 : 0.0;
    double vu = v_half ? 0x1p-11 : 0.0, va = v_half ? 0x1p-25 : 0.0;
    // An integer cache's dequantised K / V rounded to a 16-bit activation dtype (kv_quant.hpp):
    // its unit roundoff relative, half its smallest subnormal absolute (f16 2^-25; bf16's is nil).
    if (c_.integer_cache() && c_.dtype != DType::f32) {
      ku = vu = unit_roundoff(c_.dtype);
      ka = va = c_.dtype == DType::f16 ? 0x1p-25 : 0.0;
    }
    const double delta = 0x1p-24 * ((c_.head_size + 2) * scale * std::sqrt(q_sq) * r.max_key_norm +
                                    slope * r.rows + features_.soft_cap) +
                         scale * std::sqrt(q_sq) * (ku * r.max_key_norm + ka * std::sqrt(c_.head_size));
    return r.max_abs * (4 * u + 0x1p-20 + 4 * delta + vu) + va;
  }

  void check_kernel(const Values& k) {
    ++report_.kernel_outputs;
    const double u = unit_roundoff(k.tensor.dtype());
    if (query_.empty()) {
      query_ = file_.read("query").to_f64();
      if (c_.alibi) alibi_ = file_.read("alibi_slopes").to_f64();
    }
    for (std::int64_t row = 0; row < k.tensor.size(0); ++row) {
      const std::int32_t s = seq_of_row(row);
      for (std::int32_t h = 0; h < c_.num_heads; ++h) {
        const Range& r = range(s, c_.kv_head_of(h));
        const double bound = kernel_bound(u, r, row, h);
        for (std::int32_t d = 0; d < c_.head_size; ++d) {
          const std::int64_t i = flat(row, h, d);
          const double err = std::fabs(k.at(i) - exact_.at(i));
          ++report_.elements_checked;
          if (!(err <= bound)) {
            violation(k.name, index(row, h, d),
                      "kernel bound: |" + num(k.at(i)) + " - out_exact " + num(exact_.at(i)) + "| = " +
                          num(err) + " exceeds its a-priori bound M (4u + 2^-20 + 4 delta) = " + num(bound) +
                          " (M = max|V| " + num(r.max_abs) + ")");
          } else if (bound > 0) {
            report_.kernel_bound_use = std::max(report_.kernel_bound_use, err / bound);
          }
        }
      }
    }
  }

  void check_partials() {
    const std::int32_t P = cases::max_num_partitions(c_);
    const Shape stats{c_.num_seqs, c_.num_heads, P};
    const Values max_logits = load("v2.max_logits", stats);
    const Values exp_sums = load("v2.exp_sums", stats);
    const Values tmp_out = load("v2.tmp_out", Shape{c_.num_seqs, c_.num_heads, P, c_.head_size});
    if (max_logits.v.empty() || exp_sums.v.empty() || tmp_out.v.empty()) return;
    for (std::int32_t s = 0; s < c_.num_seqs; ++s) {
      const std::int32_t len = c_.seq_lens[static_cast<std::size_t>(s)];
      for (std::int32_t p = 0; p < P; ++p) {
        const IndexRange tokens = partition_tokens(len, c_.partition_size, p);
        // Visible: some token of the partition inside the window of the query at len - 1.
        const bool visible =
            !tokens.empty() && decode_visible(len - 1, tokens.end - 1, features_.sliding_window);
        for (std::int32_t h = 0; h < c_.num_heads; ++h) {
          const std::int64_t i = (std::int64_t{s} * c_.num_heads + h) * P + p;
          const std::string at = partition_index(s, h, p);
          const double m = max_logits.at(i), e = exp_sums.at(i);
          report_.elements_checked += 2;
          if (visible) {
            if (!std::isfinite(m))
              violation("v2.max_logits", at,
                        "partials: " + num(m) + " for a partition with visible tokens (must be finite)");
            if (!(std::isfinite(e) && e >= 1))
              violation("v2.exp_sums", at,
                        "partials: " + num(e) +
                            " for a partition with visible tokens (must be finite and >= 1: its largest "
                            "logit contributes exp(0))");
          } else {
            if (m != -kInf)
              violation("v2.max_logits", at,
                        "partials: " + num(m) + " for a partition with no visible token (must be -inf)");
            if (e != 0)
              violation("v2.exp_sums", at,
                        "partials: " + num(e) + " for a partition with no visible token (must be 0)");
            for (std::int32_t d = 0; d < c_.head_size; ++d)
              if (tmp_out.at(i * c_.head_size + d) != 0) {
                violation("v2.tmp_out", at,
                          "partials: dim " + std::to_string(d) + " is " +
                              num(tmp_out.at(i * c_.head_size + d)) +
                              " for a partition with no visible token (must be 0)");
                break;
              }
          }
        }
      }
    }
  }

  InvariantReport finish() { return std::move(report_); }

  Range& range(std::int32_t s, std::int32_t g) {
    return ranges_[static_cast<std::size_t>(s) * c_.num_kv_heads + g];
  }

  const TensorFile& file_;
  const Case c_;
  const kinds::KernelKind& kind_;
  /// An output row per new token (prefix) or per sequence (decode): the layout of the kind's output.
  const bool token_rows_ = kind_.attention_rows() == kinds::RowLayout::per_token;
  const cases::KernelFeatures features_ = cases::kernel_features(c_);
  const std::size_t max_;
  InvariantReport report_;
  Values exact_;
  std::vector<Range> ranges_;
  std::vector<double> query_, alibi_;
  std::vector<std::int64_t> first_row_;  // prefix: the first row of every sequence (+ the end)
};

}  // namespace

InvariantReport check_golden_invariants(const TensorFile& file, std::size_t max_violations) {
  return Checker(file, max_violations).run();
}

void require_golden_invariants(const TensorFile& file) {
  const InvariantReport r = check_golden_invariants(file);
  if (r.ok()) return;
  std::string list;
  for (const auto& v : r.violations) list += "\n  " + v.text();
  if (r.violation_count > static_cast<std::int64_t>(r.violations.size()))
    list += "\n  ... and " +
            std::to_string(r.violation_count - static_cast<std::int64_t>(r.violations.size())) + " more";
  std::string hint = "regenerate it with pao golden (--force)";
  if (const auto ref = manifest_entry_of(file.path()))
    hint = "regenerate it: " + regenerate_command(ref->manifest, ref->entry, file.path().parent_path());
  std::ostringstream os;
  os << file.path().string() << ": not a sound golden: " << r.violation_count
     << " violation(s) of the invariants of attention (docs/golden.md, \"Golden integrity\"); a verdict "
        "against it cannot be trusted, "
     << hint << ":" << list;
  throw UnsoundGolden(os.str());
}

}  // namespace pao::golden

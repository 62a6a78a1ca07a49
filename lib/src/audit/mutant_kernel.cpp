// The independent fp32 vendor kernel with switchable bugs (pao/audit/mutant_kernel.hpp).
#include "pao/audit/mutant_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pao/cases/vllm_compat.hpp"
#include "pao/core/error.hpp"
#include "pao/kernels/decode_geometry.hpp"
#include "pao/kernels/logits.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/numerics/element.hpp"
#include "pao/plan/partition.hpp"

namespace pao::audit {

namespace {

using cases::Case;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

const Tensor& need(const golden::GoldenTensors& g, const char* name) {
  const Tensor* t = g.find(name);
  require(t != nullptr, "mutant kernel: the golden has no tensor '", name, "'");
  return *t;
}

class Mutant {
 public:
  Mutant(const Case& c, const golden::GoldenTensors& g, const MutantOptions& o)
      : c_(c),
        kind_(kinds::kind_of(c)),
        through_half_(kind_.dequant_through_half(c)),
        o_(o),
        D_(c.head_size),
        dtype_(c.dtype),
        cache_dtype_(c.cache_storage_dtype()) {
    require(kind_.traits().attends, "mutant kernel: case ", c.id, " is a ", kind_.name(),
            " case: the mutation library plants attention bugs");
    query_ = need(g, "query").to_f64();
    block_tables_ = &need(g, "block_tables");
    const Tensor& kc = need(g, "key_cache");
    const Tensor& vc = need(g, "value_cache");
    DType decode_as = cache_dtype_;
    if (o.bug == Bug::fp8_other_format || o.bug == Bug::integer_sign_confused)
      decode_as = dtype_info(cache_dtype_).misread_as;
    keys_.resize(static_cast<std::size_t>(kc.numel()));
    values_.resize(static_cast<std::size_t>(vc.numel()));
    decode_to_f32(decode_as, kc.bytes(), keys_.data(),
                  keys_.size());  // every cache dtype fits in f32 exactly
    decode_to_f32(decode_as, vc.bytes(), values_.data(), values_.size());
    if (c.integer_cache())  // scales and zero points, with their own index arithmetic
      for (const CacheTensor t : {CacheTensor::key, CacheTensor::value}) {
        const bool key = t == CacheTensor::key;
        const Tensor& scale = need(g, std::string(quant_param_name(t, false)).c_str());
        (key ? key_scale_ : value_scale_) = scale.to_f64();
        (key ? key_zero_point_ : value_zero_point_) =
            need(g, std::string(quant_param_name(t, true)).c_str()).to_f64();
        (key ? key_param_shape_ : value_param_shape_) = scale.shape();
      }
    key_layout_ = contiguous_cache_layout(c.kv_layout, CacheTensor::key, kc.shape());
    value_layout_ = contiguous_cache_layout(c.kv_layout, CacheTensor::value, vc.shape());
    num_blocks_ = kc.size(0);
    if (c.alibi) alibi_ = need(g, "alibi_slopes").to_f64();
    if (kind_.traits().new_tokens) {  // their K / V are inputs of their own
      new_keys_ = need(g, "key").to_f64();
      new_values_ = need(g, "value").to_f64();
    }
  }

  /// The rows the kind's output declares: a row per new token, causal attention over context +
  /// new tokens (prefix); else one query per sequence over its tokens (decode, V2's partials and
  /// reduce).
  std::vector<std::pair<std::string, Tensor>> run() {
    return kind_.attention_rows() == kinds::RowLayout::per_token ? prefix() : decode();
  }

 private:
  float round_act(float v) const { return static_cast<float>(round_to_dtype(dtype_, v)); }

  std::int32_t kv_head(std::int32_t h) const {
    return o_.bug == Bug::gqa_head_mapping ? h % c_.num_kv_heads : c_.kv_head_of(h);
  }

  LogitParams params(std::int32_t h) const {
    LogitParams p;
    p.scale = cases::effective_scale(c_);
    if (o_.bug == Bug::softmax_scale_log2e) p.scale = static_cast<float>(p.scale * 1.4426950408889634);
    p.soft_cap = static_cast<float>(features_.soft_cap);
    p.sliding_window = features_.sliding_window;
    if (p.sliding_window > 0 && o_.bug == Bug::window_plus_one) p.sliding_window += 1;
    if (p.sliding_window > 1 && o_.bug == Bug::window_minus_one) p.sliding_window -= 1;
    if (!alibi_.empty() && o_.bug != Bug::alibi_missing) {
      p.alibi = true;
      p.alibi_slope = static_cast<float>(alibi_[static_cast<std::size_t>(h)]);
      if (o_.bug == Bug::alibi_sign_flipped) p.alibi_slope = -p.alibi_slope;
    }
    return p;
  }

  /// The physical block of logical block b of sequence s (the bug reads the next table entry,
  /// whatever it holds: a garbage id wraps around the pool as a stray address would).
  std::int64_t physical_block(std::int32_t s, std::int32_t b) const {
    if (o_.bug == Bug::block_table_off_by_one && b + 1 < block_tables_->size(1)) ++b;
    const std::int64_t id = block_tables_->view().i32_at({s, b});
    return ((id % num_blocks_) + num_blocks_) % num_blocks_;
  }

  /// An integer cache's (code - zero point) * scale of (block, kv head g, token t, dim d) in f32,
  /// the parameters found from their tensor's shape [num_blocks, num_kv_heads, rows, cols].
  float integer_value(bool key, std::int64_t block, std::int32_t g, std::int32_t t, std::int32_t d,
                      float code) const {
    const Shape& shape = key ? key_param_shape_ : value_param_shape_;
    const std::int64_t rows = shape[2], cols = shape[3];
    std::int64_t r = rows == 1 ? 0 : t, col = d / (D_ / cols);
    if (o_.bug == Bug::quant_params_of_neighbour) {  // one index off by one
      if (rows == 1)
        col = (col + 1) % cols;
      else
        r = (r + 1) % rows;
    }
    const auto i = static_cast<std::size_t>(((block * shape[1] + g) * rows + r) * cols + col);
    const float zp = o_.bug == Bug::zero_point_ignored
                         ? 0.0f
                         : static_cast<float>((key ? key_zero_point_ : value_zero_point_)[i]);
    return round_act((code - zp) * static_cast<float>((key ? key_scale_ : value_scale_)[i]));
  }

  /// Row t of K or V of (sequence s, kv head g), dequantised as vLLM's kernels do.
  void cache_row(bool key, std::int32_t s, std::int32_t g, std::int32_t t, float* out) const {
    const bool from_input = kind_.traits().new_tokens && features_.new_kv_source == NewKVSource::input;
    const std::int32_t ctx = from_input ? c_.context_len(static_cast<std::size_t>(s)) : 1 << 30;
    if (t >= ctx) {  // prefix: a new token, from the unquantised key / value
      const auto& src = key ? new_keys_ : new_values_;
      const std::int64_t row = first_row_[static_cast<std::size_t>(s)] + (t - ctx);
      for (std::int32_t d = 0; d < D_; ++d)
        out[d] = static_cast<float>(src[static_cast<std::size_t>((row * c_.num_kv_heads + g) * D_ + d)]);
      return;
    }
    const auto& data = key ? keys_ : values_;
    const PagedCacheLayout& layout = key ? key_layout_ : value_layout_;
    const std::int64_t block = physical_block(s, t / c_.block_size);
    const bool fp8 = is_fp8(cache_dtype_);
    const bool ignored = key ? o_.bug == Bug::k_scale_ignored : o_.bug == Bug::v_scale_ignored;
    const float scale = ignored ? 1.0f : c_.kv_scale(key ? CacheTensor::key : CacheTensor::value, g);
    // vLLM's decode kernel rounds an f32 activation's dequantised fp8 through half when it loads
    // vectors of 2+ (fp8_dequant_through_half); its Triton prefix kernel does not.
    const bool through_half = key ? through_half_.key : through_half_.value;
    for (std::int32_t d = 0; d < D_; ++d) {
      const std::int32_t stored_dim = o_.bug == Bug::u4_nibbles_swapped ? d ^ 1 : d;
      const float v = data[static_cast<std::size_t>(layout.offset(block, g, t % c_.block_size, stored_dim))];
      if (c_.integer_cache()) {
        out[d] = integer_value(key, block, g, t % c_.block_size, d, v);
        continue;
      }
      out[d] = !fp8           ? v
               : through_half ? static_cast<float>(round_to_dtype(DType::f16, v * scale))
                              : round_act(v * scale);
    }
  }

  float dot(const double* q, const float* k) const {
    float acc = 0.0f;
    for (std::int32_t d = 0; d < D_; ++d)
      acc = o_.fma ? std::fma(static_cast<float>(q[d]), k[d], acc) : acc + static_cast<float>(q[d]) * k[d];
    return acc;
  }

  /// acc += p * v over the head's dims.
  void accumulate(float p, const float* v, float* acc) const {
    for (std::int32_t d = 0; d < D_; ++d) acc[d] = o_.fma ? std::fma(p, v[d], acc[d]) : acc[d] + p * v[d];
  }

  float prob(float p) const { return o_.fp32_probabilities ? p : round_act(p); }

  struct Partial {
    std::vector<float> tmp;  // rounded to the activation dtype
    float max_logit = kNegInf, exp_sum = 0.0f;
  };

  Partial partition(std::int32_t s, std::int32_t h, std::int32_t len, IndexRange tokens) const {
    Partial part;
    part.tmp.assign(static_cast<std::size_t>(D_), 0.0f);
    if (tokens.empty()) return part;
    const LogitParams p = params(h);
    const std::int32_t g = kv_head(h);
    const double* q = query_.data() + (static_cast<std::size_t>(s) * c_.num_heads + h) * D_;
    std::vector<float> row(static_cast<std::size_t>(D_)), logits;
    for (std::int32_t t = tokens.begin; t < tokens.end; ++t) {
      cache_row(true, s, g, t, row.data());
      logits.push_back(decode_logit(dot(q, row.data()), p, t, len));
    }
    for (float l : logits) part.max_logit = std::max(part.max_logit, l);
    if (part.max_logit == kNegInf) return {part.tmp, kNegInf, 0.0f};  // the window hides the partition
    for (float& l : logits) part.exp_sum += (l = std::exp(l - part.max_logit));
    const float inv = 1.0f / (part.exp_sum + (o_.guard ? 1e-6f : 0.0f));
    std::vector<float> acc(static_cast<std::size_t>(D_), 0.0f);
    for (std::int32_t t = tokens.begin; t < tokens.end; ++t) {
      cache_row(false, s, g, t, row.data());
      accumulate(prob(logits[static_cast<std::size_t>(t - tokens.begin)] * inv), row.data(), acc.data());
    }
    if (o_.bug == Bug::nan_leak && tokens.end == len)  // the rest of the last block, with p = 0
      for (std::int32_t t = len; t < round_up(len, c_.block_size); ++t) {
        cache_row(false, s, g, t, row.data());
        accumulate(0.0f, row.data(), acc.data());
      }
    for (std::int32_t d = 0; d < D_; ++d)
      part.tmp[static_cast<std::size_t>(d)] = round_act(acc[static_cast<std::size_t>(d)]);
    return part;
  }

  std::vector<std::pair<std::string, Tensor>> decode() {
    const std::int32_t S = c_.num_seqs, H = c_.num_heads, P = cases::max_num_partitions(c_);
    Tensor out(dtype_, {S, H, D_}), tmp_out(dtype_, {S, H, P, D_});
    Tensor max_logits(DType::f32, {S, H, P}), exp_sums(DType::f32, {S, H, P});
    for (std::int32_t s = 0; s < S; ++s) {
      std::int32_t len = c_.seq_lens[static_cast<std::size_t>(s)];
      if (o_.bug == Bug::last_token_dropped && len > 0) --len;
      if (o_.bug == Bug::partial_block_dropped) len = len / c_.block_size * c_.block_size;
      const std::int32_t used = std::max(1, partitions_of_sequence(len, c_.partition_size));
      for (std::int32_t h = 0; h < H; ++h) {
        std::vector<Partial> parts;
        for (std::int32_t p = 0; p < P; ++p) {
          IndexRange tokens = partition_tokens(len, c_.partition_size, p);
          if (o_.bug == Bug::partition_boundary_off_by_one && !tokens.empty())
            tokens.end = std::min(tokens.end + 1, len);
          parts.push_back(partition(s, h, len, tokens));
        }
        if (o_.bug == Bug::partials_swapped && used >= 2) std::swap(parts[0].tmp, parts[1].tmp);
        for (std::int32_t p = 0; p < P; ++p) {
          const Partial& part = parts[static_cast<std::size_t>(p)];
          max_logits.set({s, h, p}, part.max_logit);
          exp_sums.set({s, h, p}, part.exp_sum);
          for (std::int32_t d = 0; d < D_; ++d)
            tmp_out.set({s, h, p, d}, part.tmp[static_cast<std::size_t>(d)]);
        }
        // The reduce: one partition is copied; more are merged, rescaled to the largest max.
        std::vector<float> o(static_cast<std::size_t>(D_), 0.0f);
        if (used == 1) {
          o = parts[0].tmp;
        } else {
          float m = kNegInf, total = 0.0f;
          for (std::int32_t p = 0; p < used; ++p)
            m = std::max(m, parts[static_cast<std::size_t>(p)].max_logit);
          std::vector<float> w(static_cast<std::size_t>(used));
          for (std::int32_t p = 0; p < used; ++p) {
            const Partial& part = parts[static_cast<std::size_t>(p)];
            const bool rescale = o_.bug != Bug::reduce_without_max_rescaling;
            w[static_cast<std::size_t>(p)] =
                part.max_logit == kNegInf ? 0.0f
                                          : part.exp_sum * (rescale ? std::exp(part.max_logit - m) : 1.0f);
            total += w[static_cast<std::size_t>(p)];
          }
          const float inv = 1.0f / (total + (o_.guard ? 1e-6f : 0.0f));
          for (std::int32_t p = 0; p < used; ++p)
            accumulate(w[static_cast<std::size_t>(p)] * inv, parts[static_cast<std::size_t>(p)].tmp.data(),
                       o.data());
        }
        for (std::int32_t d = 0; d < D_; ++d) out.set({s, h, d}, round_act(o[static_cast<std::size_t>(d)]));
      }
    }
    std::vector<std::pair<std::string, Tensor>> r;
    r.emplace_back("out", std::move(out));
    r.emplace_back("tmp_out", std::move(tmp_out));
    r.emplace_back("max_logits", std::move(max_logits));
    r.emplace_back("exp_sums", std::move(exp_sums));
    return r;
  }

  std::vector<std::pair<std::string, Tensor>> prefix() {
    const auto start = c_.query_start_locs();
    first_row_.assign(start.begin(), start.end());
    Tensor out(dtype_, {c_.num_tokens(), c_.num_heads, D_});
    std::vector<float> row(static_cast<std::size_t>(D_)), acc(static_cast<std::size_t>(D_));
    for (std::int32_t s = 0; s < c_.num_seqs; ++s) {
      const std::int32_t ctx = c_.context_len(static_cast<std::size_t>(s));
      std::int32_t len = c_.seq_lens[static_cast<std::size_t>(s)];
      if (o_.bug == Bug::last_token_dropped && len > 0) --len;
      for (std::int32_t j = 0; j < c_.query_lens[static_cast<std::size_t>(s)]; ++j) {
        const std::int64_t r = first_row_[static_cast<std::size_t>(s)] + j;
        const std::int32_t q_pos = ctx + j;
        for (std::int32_t h = 0; h < c_.num_heads; ++h) {
          const LogitParams p = params(h);
          const std::int32_t g = kv_head(h);
          const double* q = query_.data() + (static_cast<std::size_t>(r) * c_.num_heads + h) * D_;
          std::vector<std::int32_t> tokens;
          std::vector<float> logits;
          for (std::int32_t t = 0; t < len; ++t) {
            const bool next_token = o_.bug == Bug::causal_off_by_one && t == q_pos + 1;
            if (!prefix_visible(q_pos, t, p.sliding_window) && !next_token) continue;
            cache_row(true, s, g, t, row.data());
            tokens.push_back(t);
            logits.push_back(prefix_logit(dot(q, row.data()), p, t, q_pos));
          }
          float m = kNegInf, sum = 0.0f;
          for (float l : logits) m = std::max(m, l);
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (std::size_t i = 0; i < tokens.size(); ++i) {
            const float e = std::exp(logits[i] - m);
            sum += e;
            cache_row(false, s, g, tokens[i], row.data());
            accumulate(prob(e), row.data(), acc.data());
          }
          for (std::int32_t d = 0; d < D_; ++d)
            out.set({r, h, d}, round_act(sum > 0 ? acc[static_cast<std::size_t>(d)] / sum : 0.0f));
        }
      }
    }
    std::vector<std::pair<std::string, Tensor>> r;
    r.emplace_back("out", std::move(out));
    return r;
  }

  const Case& c_;
  const kinds::KernelKind& kind_;
  const kinds::KernelKind::DequantThroughHalf through_half_;
  const cases::KernelFeatures features_ = cases::kernel_features(c_);
  const MutantOptions o_;
  const std::int32_t D_;
  const DType dtype_, cache_dtype_;
  std::vector<double> query_, new_keys_, new_values_, alibi_;
  std::vector<float> keys_, values_;
  std::vector<double> key_scale_, key_zero_point_, value_scale_, value_zero_point_;  // integer caches
  Shape key_param_shape_, value_param_shape_;
  const Tensor* block_tables_ = nullptr;
  PagedCacheLayout key_layout_, value_layout_;
  std::int64_t num_blocks_ = 1;
  std::vector<std::int64_t> first_row_{0};
};

}  // namespace

std::vector<std::pair<std::string, Tensor>> run_mutant(const Case& c, const golden::GoldenTensors& golden,
                                                       const MutantOptions& options) {
  return Mutant(c, golden, options).run();
}

}  // namespace pao::audit

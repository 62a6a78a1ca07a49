// reshape_and_cache's verdict (pao/diff/cache_write.hpp).
#include "pao/diff/cache_write.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <sstream>
#include <type_traits>
#include <vector>

#include "pao/numerics/element.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kv_quant.hpp"

namespace pao::diff {

namespace {

/// What a wrong element of a mapped slot is, besides wrong.
/// kTail: an unmapped slot in the unused tail of a sequence's last block (a kOutside too).
/// kNotRequantised: an earlier token of a by_channel block the write requantises, left as it was.
enum Kind : std::size_t {
  kScaleIgnored,
  kDoubleRounding,
  kOneUlp,
  kNotWritten,
  kNotRequantised,
  kTail,
  kOutside,
  kOther,
  kKinds
};

/// The code of v in the quantised cache format cd (one rounding), and the value of a code.
std::uint8_t fp8_code(DType cd, float v) {
  std::uint8_t code = 0;
  encode_from_f32(cd, &v, &code, 1);
  return code;
}

float fp8_value(DType cd, std::uint8_t code) { return static_cast<float>(decode_element(cd, &code)); }

std::string hex(std::uint64_t bits, std::size_t bytes) {
  std::ostringstream os;
  os << "0x" << std::hex;
  os.width(static_cast<int>(2 * bytes));
  os.fill('0');
  os << bits;
  return os.str();
}

struct Mismatch {
  std::int64_t block, offset, head, dim, token;
  std::uint64_t expected, actual;
};

class CacheComparison {
 public:
  explicit CacheComparison(const CacheWriteInput& in)
      : in_(in), c_(*in.golden_case), cd_(in.expected->dtype()), es_(dtype_size(cd_)) {}

  TensorReport run() {
    TensorReport r;
    r.name = in_.which == CacheTensor::key ? "key_cache" : "value_cache";
    r.actual_name = in_.actual_name;
    r.reference = "the golden's " + r.name + " (bit for bit)";
    r.policy.rule = Rule::bitwise;
    r.golden_dtype = cd_;
    r.actual_dtype = in_.actual->dtype();
    r.shape = in_.expected->shape();
    const bool raw_fp8 = is_fp8(cd_) && in_.actual->dtype() == DType::u8;  // vLLM's uint8 fp8 caches
    if (in_.actual->shape() != in_.expected->shape()) {
      r.problem = "shape " + shape_to_string(in_.actual->shape()) + ", the golden's " +
                  shape_to_string(r.shape) + " " + cache_shape_doc(c_.kv_layout, in_.which) + " (kv_layout " +
                  kv_layout_name(c_.kv_layout) + ")";
      return r;
    }
    if (in_.actual->dtype() != cd_ && !raw_fp8) {
      r.problem = "dtype " + std::string(dtype_name(in_.actual->dtype())) + ", the golden's " +
                  std::string(dtype_name(cd_)) + (is_fp8(cd_) ? " (or u8 holding its codes)" : "");
      return r;
    }
    map_slots();
    layout_ = contiguous_cache_layout(c_.kv_layout, in_.which, r.shape);
    const PagedCacheLayout& layout = layout_;
    const std::int64_t blocks = r.shape[0];
    r.per_seq.assign(static_cast<std::size_t>(c_.num_seqs), {});
    r.per_head.assign(static_cast<std::size_t>(c_.num_kv_heads), {});
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t o = 0; o < c_.block_size; ++o) {
        const auto it = token_of_slot_.find(b * c_.block_size + o);
        const std::int64_t token = it == token_of_slot_.end() ? -1 : it->second;
        for (std::int64_t h = 0; h < c_.num_kv_heads; ++h)
          for (std::int64_t d = 0; d < c_.head_size; ++d) {
            const std::int64_t off = layout.offset(b, h, o, d);
            const std::uint64_t e = bits(*in_.expected, off), a = bits(*in_.actual, off);
            ++r.compared;
            const bool bad = a != e;
            if (bad) {
              ++r.mismatched;
              const Mismatch m{b, o, h, d, token, e, a};
              classify(m, off);
            }
            if (token >= 0) {
              Tally& t = r.per_seq[static_cast<std::size_t>(seq_of_token_[static_cast<std::size_t>(token)])];
              ++t.compared;
              t.mismatched += bad;
            }
            ++r.per_head[static_cast<std::size_t>(h)].compared;
            r.per_head[static_cast<std::size_t>(h)].mismatched += bad;
          }
      }
    r.passed = r.mismatched == 0;
    if (!r.passed) r.failed_criteria.push_back("bitwise");
    r.verdict = verdict(r);
    return r;
  }

 private:
  std::uint64_t bits(const Tensor& t, std::int64_t element) const {
    std::uint64_t v = 0;
    std::memcpy(&v, t.bytes() + element * static_cast<std::int64_t>(es_), es_);
    return v;
  }

  void map_slots() {
    const Tensor& sm = *in_.slot_mapping;
    const std::vector<std::int32_t> start = c_.query_start_locs();
    seq_of_token_.assign(static_cast<std::size_t>(sm.size(0)), -1);
    for (std::int32_t s = 0; s < c_.num_seqs; ++s)
      for (std::int32_t t = start[static_cast<std::size_t>(s)]; t < start[static_cast<std::size_t>(s) + 1];
           ++t)
        seq_of_token_[static_cast<std::size_t>(t)] = s;
    for (std::int64_t t = 0; t < sm.size(0); ++t) {
      const auto slot = static_cast<std::int64_t>(sm.at({t}));
      if (slot >= 0) token_of_slot_[slot] = t;
    }
    // A by_channel block written after its first slot is requantised: its earlier tokens' codes change.
    if (c_.integer_cache() && c_.kv_quant.of(in_.which).granularity == QuantGranularity::by_channel)
      for (const auto& [slot, token] : token_of_slot_)
        if (slot % c_.block_size != 0 && !token_of_slot_.count(slot - 1))
          first_written_.emplace(slot / c_.block_size, slot % c_.block_size);
    if (!in_.block_tables || !in_.seq_lens) return;
    for (std::int32_t s = 0; s < c_.num_seqs; ++s) {  // positions past seq_len in its last block
      const auto n = static_cast<std::int64_t>(in_.seq_lens->at({s}));
      for (std::int64_t pos = n; pos % c_.block_size != 0; ++pos) {
        const auto block = static_cast<std::int64_t>(in_.block_tables->at({s, pos / c_.block_size}));
        tail_of_slot_[block * c_.block_size + pos % c_.block_size] = {s, pos};
      }
    }
  }

  /// Counts, for every explanation, the mismatches it is consistent with (one mismatch may fit
  /// several: a double rounding is also one code off); the verdict names the most specific one
  /// that explains them all.
  void classify(const Mismatch& m, std::int64_t off) {
    if (m.token < 0 && earlier_token(m)) {  // an earlier token of a requantised block
      count(m.actual == bits(*in_.before, off) ? kNotRequantised : kOther, m);
      return;
    }
    if (m.token < 0) {
      if (tail_of_slot_.count(m.block * c_.block_size + m.offset)) count(kTail, m);
      count(kOutside, m);
      return;
    }
    if (m.actual == bits(*in_.before, off)) {
      count(kNotWritten, m);
      return;
    }
    bool explained = false;
    if (is_fp8(cd_)) {
      const auto x = static_cast<float>(in_.source->at({m.token, m.head, m.dim}));
      const float scale = c_.kv_scale(in_.which, static_cast<std::int32_t>(m.head));
      const auto a = static_cast<std::uint8_t>(m.actual), e = static_cast<std::uint8_t>(m.expected);
      const float q = x / scale;
      // The scale ignored, whether or not x went through f16 / bf16 on the way.
      if (scale != 1.0f && (a == fp8_code(cd_, x) || a == fp8_code(cd_, round_to_f16(x)) ||
                            a == fp8_code(cd_, round_to_bf16(x))))
        explained = count(kScaleIgnored, m);
      if (a == fp8_code(cd_, round_to_f16(q)) || a == fp8_code(cd_, round_to_bf16(q)) ||
          a == fp8_code(cd_, round_to_f16(x) / scale))
        explained = count(kDoubleRounding, m);
      if ((a & 0x80) == (e & 0x80) && ((a & 0x7f) + 1 == (e & 0x7f) || (e & 0x7f) + 1 == (a & 0x7f)))
        explained = count(kOneUlp, m);
    }
    if (!explained) count(kOther, m);
  }

  /// One more mismatch consistent with `kind`; its first one is kept as the example.
  bool count(Kind kind, const Mismatch& m) {
    if (kinds_[kind]++ == 0) example_[kind] = m;
    return true;
  }

  std::string where(const Mismatch& m) const {
    std::ostringstream os;
    const std::int64_t slot = m.block * c_.block_size + m.offset;
    if (m.token >= 0) {
      const std::int32_t s = seq_of_token_[static_cast<std::size_t>(m.token)];
      const std::int32_t first = c_.query_start_locs()[static_cast<std::size_t>(s)];
      os << "token " << m.token << " (seq " << s << ", position "
         << c_.context_len(static_cast<std::size_t>(s)) + (m.token - first) << ") -> ";
    } else if (const auto tail = tail_of_slot_.find(m.block * c_.block_size + m.offset);
               tail != tail_of_slot_.end()) {
      os << "no token (the unused tail of seq " << tail->second.first << "'s last block: position "
         << tail->second.second << ", past its " << in_.seq_lens->at({tail->second.first}) << " tokens) at ";
    } else if (earlier_token(m)) {
      os << "an earlier token of the requantised block at ";
    } else {
      os << "no token (unmapped) at ";
    }
    os << "slot " << slot << " = block " << m.block << " offset " << m.offset << ", kv head " << m.head
       << ", dim " << m.dim << ": actual " << value_text(m.actual) << ", expected " << value_text(m.expected);
    if (m.token < 0) os << source_row(m);
    if (m.token >= 0 && is_fp8(cd_)) {
      const auto x = static_cast<float>(in_.source->at({m.token, m.head, m.dim}));
      os << " (x = " << x << ", scale " << c_.kv_scale(in_.which, static_cast<std::int32_t>(m.head)) << ")";
    }
    return os.str();
  }

  /// The bits the write stores for element (row, head, dim) of the source (key or value).
  std::uint64_t written_bits(std::int64_t row, std::int64_t head, std::int64_t dim) const {
    if (!is_fp8(cd_)) return bits(*in_.source, (row * c_.num_kv_heads + head) * c_.head_size + dim);
    const auto x = static_cast<float>(in_.source->at({row, head, dim}));
    return fp8_code(cd_, x / c_.kv_scale(in_.which, static_cast<std::int32_t>(head)));
  }

  /// An unmapped slot written: the source row (and head) whose data head `m.head` of the slot
  /// holds, bit for bit in every dim ("; kv head 0 of this slot holds key[260] kv head 1, a
  /// padding row (slot -1)": a -1 row written at a negative offset lands in the previous head), or
  /// "" when none does.
  std::string source_row(const Mismatch& m) const {
    for (std::int64_t row = 0; row < in_.source->size(0); ++row)
      for (std::int64_t h = 0; h < c_.num_kv_heads; ++h) {
        bool same = true;
        for (std::int64_t d = 0; d < c_.head_size && same; ++d)
          same = written_bits(row, h, d) == bits(*in_.actual, layout_.offset(m.block, m.head, m.offset, d));
        if (!same) continue;
        std::ostringstream os;
        os << "; kv head " << m.head << " of this slot holds "
           << (in_.which == CacheTensor::key ? "key" : "value") << "[" << row << "]";
        if (h != m.head) os << " kv head " << h;
        const auto slot =
            row < in_.slot_mapping->size(0) ? static_cast<std::int64_t>(in_.slot_mapping->at({row})) : -1;
        if (slot < 0)
          os << ", a padding row (slot -1)";
        else
          os << ", whose slot is " << slot;
        return os.str();
      }
    return "";
  }

  std::string value_text(std::uint64_t b) const {
    std::ostringstream os;
    os << hex(b, es_);
    if (is_fp8(cd_)) os << " = " << fp8_value(cd_, static_cast<std::uint8_t>(b));
    return os.str();
  }

  Verdict verdict(const TensorReport& r) const {
    if (r.mismatched == 0) return {Pattern::none, "no mismatch"};
    static constexpr struct {
      Kind kind;
      Pattern pattern;
      const char* text;
    } kNames[] = {
        {kScaleIgnored, Pattern::scale_ignored,
         "the code is fp8(x), not fp8(x / scale): the scale is ignored"},
        {kDoubleRounding, Pattern::double_rounding,
         "the code is fp8 of x / scale rounded to f16 or bf16 first: rounded twice"},
        {kOneUlp, Pattern::one_ulp,
         "the code is one fp8 code from the right one: another rounding of x / scale"},
        {kNotWritten, Pattern::not_written, "the mapped slot still holds what it held before the write"},
        {kNotRequantised, Pattern::not_written,
         "the earlier tokens of a by_channel block keep their codes from before the write: the block was "
         "not requantised over its new tokens (kv_quant by_channel: its scales span every token in it)"},
        {kTail, Pattern::outside_slots,
         "slots no token maps to were written, all in the unused tails of the sequences' last blocks "
         "(past each seq_len: no reader looks at them before a token is written there, but they are "
         "outside slot_mapping)"},
        {kOutside, Pattern::outside_slots,
         "a slot no token maps to was written (a -1 padding row, a wrong slot)"},
        {kOther, Pattern::scattered, "another value"},
    };
    std::ostringstream detail;
    for (const auto& n : kNames)  // the most specific explanation of every mismatch
      if (n.kind != kOther && kinds_[n.kind] == r.mismatched) {
        detail << "every mismatch (" << r.mismatched << "): " << n.text << "; first at "
               << where(example_[n.kind]);
        return {n.pattern, detail.str()};
      }
    // No one explanation: how many mismatches each is consistent with (they may overlap: a double
    // rounding is also one code off), and the first example of each, commonest first.
    std::vector<const std::remove_extent_t<decltype(kNames)>*> present;
    for (const auto& n : kNames)
      if (kinds_[n.kind] > 0) present.push_back(&n);
    std::stable_sort(present.begin(), present.end(),
                     [&](const auto* a, const auto* b) { return kinds_[a->kind] > kinds_[b->kind]; });
    auto name = [](const auto* n) {
      if (n->kind == kOther) return std::string("unexplained");
      if (n->kind == kNotRequantised) return std::string("not-requantised (earlier tokens kept)");
      if (n->kind == kTail) return std::string("outside-slots (unused tails)");
      return to_string(n->pattern);
    };
    detail << r.mismatched << " mismatches, consistent with (a mismatch may fit several):";
    for (const auto* n : present) detail << " " << kinds_[n->kind] << " " << name(n) << ";";
    detail << " the first of each:";
    for (std::size_t i = 0; i < present.size(); ++i)
      detail << (i ? "; " : " ") << name(present[i]) << " at " << where(example_[present[i]->kind]);
    return {Pattern::scattered, detail.str()};
  }

  const CacheWriteInput& in_;
  const cases::Case& c_;
  const DType cd_;
  const std::size_t es_;
  PagedCacheLayout layout_;
  std::map<std::int64_t, std::int64_t> token_of_slot_;
  std::map<std::int64_t, std::pair<std::int32_t, std::int64_t>> tail_of_slot_;  // slot -> (seq, position)
  /// A requantised by_channel block's first written offset: its slots below hold earlier tokens.
  std::map<std::int64_t, std::int64_t> first_written_;
  bool earlier_token(const Mismatch& m) const {
    const auto it = first_written_.find(m.block);
    return it != first_written_.end() && m.offset < it->second;
  }
  std::vector<std::int32_t> seq_of_token_;
  std::int64_t kinds_[kKinds] = {};
  Mismatch example_[kKinds] = {};  // the first mismatch of each kind
};

}  // namespace

TensorReport compare_cache_write(const CacheWriteInput& in) { return CacheComparison(in).run(); }

namespace {

/// The granularity whose param tensor has `shape` [num_blocks, num_kv_heads, tokens, groups], or "".
std::string granularity_of_shape(const Shape& shape, std::int64_t head_size, std::int64_t block_size) {
  if (shape.size() != 4) return "";
  if (shape[2] == 1 && shape[3] == head_size) return "by_channel";
  if (shape[2] != block_size || shape[3] < 1 || head_size % shape[3] != 0) return "";
  return shape[3] == 1 ? "by_token" : "group_" + std::to_string(head_size / shape[3]);
}

}  // namespace

TensorReport compare_quant_param_write(const QuantParamWriteInput& in) {
  const cases::Case& c = *in.golden_case;
  const TensorQuant& tq = c.kv_quant.of(in.which);
  const std::string tensor = in.which == CacheTensor::key ? "key" : "value";
  TensorReport r;
  r.name = std::string(quant_param_name(in.which, in.zero_point));
  r.actual_name = in.actual_name;
  r.reference = "the golden's " + r.name + " (bit for bit)";
  r.policy.rule = Rule::bitwise;
  r.golden_dtype = in.expected->dtype();
  r.actual_dtype = in.actual->dtype();
  r.shape = in.expected->shape();
  if (in.actual->shape() != r.shape) {
    const std::string theirs = granularity_of_shape(in.actual->shape(), c.head_size, c.block_size);
    r.problem = "shape " + shape_to_string(in.actual->shape()) + ", the golden's " +
                shape_to_string(r.shape) + " (kv_quant." + tensor + " " + to_string(tq) +
                "): the vendor quantised the " + tensor + " cache another way" +
                (theirs.empty() ? "" : " (its shape is " + tensor + " " + theirs + "'s)") +
                "; its codes mean something else than the golden's";
    return r;
  }
  if (r.actual_dtype != r.golden_dtype) {
    r.problem = "dtype " + std::string(dtype_name(r.actual_dtype)) + ", the golden's " +
                std::string(dtype_name(r.golden_dtype)) + " (kv_quant." +
                (in.zero_point ? "zero_point_dtype" : "scale_dtype") + ")";
    return r;
  }
  const QuantParamLayout pl = quant_param_layout(tq, c.num_kv_heads, c.head_size, c.block_size);
  std::map<std::int64_t, std::int64_t> token_of_slot;
  std::map<std::int64_t, std::int64_t> first_token_of_block;  // by_channel: one param row per block
  for (std::int64_t t = 0; t < in.slot_mapping->size(0); ++t) {
    const auto slot = static_cast<std::int64_t>(in.slot_mapping->at({t}));
    if (slot < 0) continue;
    token_of_slot[slot] = t;
    first_token_of_block.emplace(slot / c.block_size, t);
  }
  const std::size_t es = dtype_size(r.golden_dtype);
  auto bits = [&](const Tensor& t, std::int64_t e) {
    std::uint64_t v = 0;
    std::memcpy(&v, t.bytes() + e * static_cast<std::int64_t>(es), es);
    return v;
  };
  std::int64_t not_written = 0, outside = 0;
  std::string first;
  const std::int64_t tokens = tq.granularity == QuantGranularity::by_channel ? 1 : c.block_size;
  for (std::int64_t b = 0; b < r.shape[0]; ++b)
    for (std::int64_t h = 0; h < c.num_kv_heads; ++h)
      for (std::int64_t o = 0; o < tokens; ++o)
        for (std::int64_t d = 0; d < c.head_size; d += pl.dims_per_param) {
          const std::int64_t e = pl.offset(b, h, o, d);
          ++r.compared;
          const std::uint64_t want = bits(*in.expected, e), got = bits(*in.actual, e);
          if (want == got) continue;
          ++r.mismatched;
          const auto it =
              tokens == 1 ? first_token_of_block.find(b) : token_of_slot.find(b * c.block_size + o);
          const bool mapped = it != (tokens == 1 ? first_token_of_block.end() : token_of_slot.end());
          not_written += mapped && got == bits(*in.before, e);
          outside += !mapped;
          if (first.empty()) {
            std::ostringstream os;
            if (mapped)
              os << "token " << it->second << " -> ";
            else
              os << "no token (unmapped) at ";
            os << "block " << b << " offset " << o << ", kv head " << h << ", dims " << d << ".."
               << d + pl.dims_per_param - 1 << ": actual "
               << in.actual->at({b, h, tokens == 1 ? 0 : o, d / pl.dims_per_param}) << ", expected "
               << in.expected->at({b, h, tokens == 1 ? 0 : o, d / pl.dims_per_param});
            first = os.str();
          }
        }
  r.passed = r.mismatched == 0;
  if (r.passed) {
    r.verdict = {Pattern::none, "no mismatch"};
    return r;
  }
  r.failed_criteria.push_back("bitwise");
  std::ostringstream detail;
  if (not_written == r.mismatched) {
    detail << "every mismatch (" << r.mismatched << "): the mapped slot's " << r.name
           << " still holds what it held before the write; first at " << first;
    r.verdict = {Pattern::not_written, detail.str()};
  } else if (outside == r.mismatched) {
    detail << "every mismatch (" << r.mismatched << "): a slot no token maps to has its " << r.name
           << " written; first at " << first;
    r.verdict = {Pattern::outside_slots, detail.str()};
  } else {
    detail << r.mismatched << " mismatches (" << not_written << " not written, " << outside
           << " in unmapped slots): another " << (in.zero_point ? "zero point" : "scale")
           << " than the golden's rule (kv_quant rule " << rule_name(c.kv_quant.rule) << ", rounding "
           << rounding_name(c.kv_quant.rounding) << "); first at " << first;
    r.verdict = {Pattern::scattered, detail.str()};
  }
  return r;
}

}  // namespace pao::diff

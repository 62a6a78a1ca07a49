// Case ids derived from the parameters: readable, stable across runs and versions, and unique
// (every field that differs from its default is in the id; lengths as given — "<count>of<L>" for
// more than 8 of one length, "<count>x<hash>" for more than 8 others — or as "n<count>-L<max>" when
// they are drawn from the seed).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "pao/cases/case.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cases {

namespace {

std::string number(double v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

/// "a.b.c" for short lists; "<count>x<fnv32 hex>" for long ones, which would make unwieldy names.
std::string lengths(const std::vector<std::int32_t>& v) {
  std::string joined;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) joined += '.';
    joined += std::to_string(v[i]);
  }
  if (v.size() <= 8) return joined;
  // Many sequences of one length (a broadcast "seq_lens": [L]): "<count>of<L>".
  if (std::all_of(v.begin(), v.end(), [&](std::int32_t l) { return l == v.front(); }))
    return std::to_string(v.size()) + "of" + std::to_string(v.front());
  std::uint32_t h = 2166136261u;
  for (unsigned char ch : joined) h = (h ^ ch) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  std::string out = std::to_string(v.size());
  out += 'x';
  out += hex;
  return out;
}

/// "auto", or the cache format's short name ("e4m3").
std::string cache_name(const Case& c) {
  if (c.integer_cache() && c.kv_quant.bits == 4) return "u4";
  return c.kv_cache_dtype ? std::string(dtype_info(*c.kv_cache_dtype).short_name) : "auto";
}

/// An integer cache's quantisation when not OpenVINO's default: "kqtokvqg32" (key by token, value
/// in groups of 32 dims), then the parameter dtypes and the rounding when not f32 / half_even.
std::string quant_name(const KVQuant& q) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "x" + std::string.
  std::string s;
  auto granularity = [&s](const TensorQuant& t) {
    if (t.granularity == QuantGranularity::by_token) s += "tok";
    if (t.granularity == QuantGranularity::by_channel) s += "ch";
    if (t.granularity == QuantGranularity::group) {
      s += 'g';
      s += std::to_string(t.group_size);
    }
  };
  s += "kq";
  granularity(q.key);
  s += "vq";
  granularity(q.value);
  if (q.scale_dtype != DType::f32) {
    s += 's';
    s += dtype_name(q.scale_dtype);
  }
  if (q.zero_point_dtype != DType::f32) {
    s += 'z';
    s += dtype_name(q.zero_point_dtype);
  }
  if (q.rounding != QuantRounding::half_even) s += "away";
  if (q.rule == QuantRule::openvino) s += "ov";
  return s;
}

/// "0.5_0.25": per-head scales.
std::string scales(const std::vector<double>& v) {
  std::string joined;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) joined += '_';
    joined += number(v[i]);
  }
  return joined;
}

}  // namespace

std::string derive_case_id(const Case& c, bool seq_lens_given, bool max_seq_len_given) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "-x" + std::string.
  const kinds::KernelKind& kind = kinds::kind_of(c);
  std::string id(kind.name());
  auto add = [&id](std::string_view tag, const std::string& value = {}) {
    id += '-';
    id += tag;
    id += value;
  };
  const auto kind_tags = [&](kinds::IdSlot slot) { kind.id_tags(c, slot, add); };
  if (kind.traits().attends)
    add("h", std::to_string(c.num_heads) + "x" + std::to_string(c.num_kv_heads));
  else
    add("h", std::to_string(c.num_kv_heads));
  add("d", std::to_string(c.head_size));
  add("b", std::to_string(c.block_size));
  add(dtype_name(c.dtype));
  add(cache_name(c));
  KVQuant spec = c.kv_quant;
  spec.bits = 8;  // u4 is named by the cache's tag
  if (c.integer_cache() && !(spec == KVQuant{})) add(quant_name(spec));
  if (c.kv_layout != KVLayout::vllm) add(kv_layout_name(c.kv_layout));
  if (c.alibi) add("alibi");
  if (c.soft_cap > 0) add("cap", number(c.soft_cap));
  if (c.sliding_window > 0) add("win", std::to_string(c.sliding_window));
  if (c.scale) add("sc", number(*c.scale));
  if (c.k_scale != 1.0) add("ks", number(c.k_scale));
  if (c.v_scale != 1.0) add("vs", number(c.v_scale));
  if (!c.k_head_scales.empty()) add("khs", scales(c.k_head_scales));
  if (!c.v_head_scales.empty()) add("vhs", scales(c.v_head_scales));
  kind_tags(kinds::IdSlot::tuning);
  if (c.distribution != ValueDistribution::uniform) add(to_string(c.distribution));
  if (c.num_blocks > 0) add("nb", std::to_string(c.num_blocks));
  kind_tags(kinds::IdSlot::grid);
  if (c.extra_table_columns != 1) add("xc", std::to_string(c.extra_table_columns));
  if (!c.poison_unused) add("nopoison");
  kind_tags(kinds::IdSlot::new_kv);
  if (c.vllm_faithful) add("vllmfaithful");
  kind_tags(kinds::IdSlot::padding);
  if (kind.traits().new_tokens) add("q", lengths(c.query_lens));
  if (seq_lens_given) {
    add("l", lengths(c.seq_lens));
    if (max_seq_len_given) add("L", std::to_string(c.max_seq_len));
  } else {
    add("n", std::to_string(c.num_seqs));
    add("L", std::to_string(c.max_seq_len));
  }
  add("s", std::to_string(c.seed));
  return id;
}

}  // namespace pao::cases

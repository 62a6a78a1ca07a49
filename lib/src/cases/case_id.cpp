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

#include "cases/case_id_text.hpp"
#include "pao/cases/case_schema.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::cases {

namespace id_text {

std::string number(double v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

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

std::string cache(const Case& c) {
  if (c.integer_cache() && c.kv_quant.bits == 4) return "u4";
  return c.kv_cache_dtype ? std::string(dtype_info(*c.kv_cache_dtype).short_name) : "auto";
}

std::string quant(const KVQuant& q) {
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

std::string scales(const std::vector<double>& v) {
  std::string joined;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) joined += '_';
    joined += number(v[i]);
  }
  return joined;
}

}  // namespace id_text

void IdBuilder::add(std::string_view tag, std::string_view value) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "-x" + std::string.
  id += '-';
  id += tag;
  id += value;
}

std::string derive_case_id(const Case& c, bool seq_lens_given, bool max_seq_len_given) {
  IdBuilder b{std::string(kinds::kind_of(c).name()), seq_lens_given, max_seq_len_given};
  for (const CaseField& f : case_fields())
    if (f.id != nullptr && kind_takes(kinds::kind_of(c), f)) f.id(f, c, b);
  return b.id;
}

}  // namespace pao::cases

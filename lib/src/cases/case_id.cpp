// Case ids derived from the parameters: readable, stable across runs and versions, and unique
// (every field that differs from its default is in the id; lengths as given, or as "n<count>-L<max>"
// when they are drawn from the seed).
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "pao/cases/case.hpp"

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
  std::uint32_t h = 2166136261u;
  for (unsigned char ch : joined) h = (h ^ ch) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  std::string out = std::to_string(v.size());
  out += 'x';
  out += hex;
  return out;
}

std::string cache_name(const Case& c) {
  switch (c.kv_cache_dtype) {
    case KVCacheDType::fp8_e4m3:
      return "e4m3";
    case KVCacheDType::fp8_e5m2:
      return "e5m2";
    case KVCacheDType::auto_dtype:
      break;
  }
  return "auto";
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
  std::string id = to_string(c.kernel);
  auto add = [&id](std::string_view tag, const std::string& value = {}) {
    id += '-';
    id += tag;
    id += value;
  };
  if (c.kernel == CaseKernel::reshape_and_cache)
    add("h", std::to_string(c.num_kv_heads));
  else
    add("h", std::to_string(c.num_heads) + "x" + std::to_string(c.num_kv_heads));
  add("d", std::to_string(c.head_size));
  add("b", std::to_string(c.block_size));
  add(dtype_name(c.dtype));
  add(cache_name(c));
  if (c.kv_layout != KVLayout::vllm) add(kv_layout_name(c.kv_layout));
  if (c.alibi) add("alibi");
  if (c.soft_cap > 0) add("cap", number(c.soft_cap));
  if (c.sliding_window > 0) add("win", std::to_string(c.sliding_window));
  if (c.scale) add("sc", number(*c.scale));
  if (c.k_scale != 1.0) add("ks", number(c.k_scale));
  if (c.v_scale != 1.0) add("vs", number(c.v_scale));
  if (!c.k_head_scales.empty()) add("khs", scales(c.k_head_scales));
  if (!c.v_head_scales.empty()) add("vhs", scales(c.v_head_scales));
  if (c.kernel == CaseKernel::decode) {
    if (c.partition_size != 512) add("p", std::to_string(c.partition_size));
    if (c.warp_size != 32) add("w", std::to_string(c.warp_size));
    if (c.threads_per_cta != 128) add("t", std::to_string(c.threads_per_cta));
  } else if (c.kernel == CaseKernel::prefix &&
             (c.block_m != 128 || c.block_n != 64 || c.context_tile != 32)) {
    add("m",
        std::to_string(c.block_m) + "n" + std::to_string(c.block_n) + "c" + std::to_string(c.context_tile));
  }
  if (c.distribution != ValueDistribution::uniform) add(to_string(c.distribution));
  if (c.num_blocks > 0) add("nb", std::to_string(c.num_blocks));
  if (c.kernel == CaseKernel::prefix && c.max_query_len > 0) add("mq", std::to_string(c.max_query_len));
  if (c.kernel == CaseKernel::prefix && !c.cache_new_tokens) add("nocache");
  if (c.extra_table_columns != 1) add("xc", std::to_string(c.extra_table_columns));
  if (!c.poison_unused) add("nopoison");
  if (c.kernel == CaseKernel::prefix && c.new_kv_source == NewKVSource::cache) add("kvcache");
  if (c.vllm_faithful) add("vllmfaithful");
  if (c.kernel == CaseKernel::reshape_and_cache && c.padding_tokens != 2)
    add("pad", std::to_string(c.padding_tokens));
  if (has_new_tokens(c.kernel)) add("q", lengths(c.query_lens));
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

// Workloads and kernel configurations: validation, parsing of kernel specs, lists and case files.
#include "pao/sim/model/workload.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/kinds/kernel_kind.hpp"
#include "pao/plan/decode_plan.hpp"
#include "pao/plan/launch_shape.hpp"

namespace pao::sim {

std::int32_t Workload::effective_max_seq_len() const { return resolved_max_seq_len(max_seq_len, seq_lens); }

std::string Workload::to_string() const {
  std::ostringstream os;
  os << "seqs=" << num_seqs << " heads=" << num_heads << "/" << num_kv_heads << " hs=" << head_size
     << " bs=" << block_size;
  if (!seq_lens.empty()) {
    const auto [lo, hi] = std::minmax_element(seq_lens.begin(), seq_lens.end());
    if (*lo == *hi)
      os << " len=" << *lo;
    else
      os << " len=" << *lo << ".." << *hi;
  }
  if (!query_lens.empty()) {
    const auto [lo, hi] = std::minmax_element(query_lens.begin(), query_lens.end());
    os << " qlen=" << *lo;
    if (*lo != *hi) os << ".." << *hi;
  }
  os << " " << dtype_name(dtype);
  if (kv_cache_dtype != dtype)
    os << "/" << (is_integer_cache(kv_cache_dtype) && kv_quant.bits == 4 ? "u4" : dtype_name(kv_cache_dtype));
  return os.str();
}

namespace {

struct ImplementationName {
  KernelImplementation implementation;
  std::string_view name;
};
constexpr ImplementationName kImplementationNames[] = {
    {KernelImplementation::vllm, "vllm"},
    {KernelImplementation::pao_cuda, "pao-cuda"},
    {KernelImplementation::pao_cuda_pre38, "pao-cuda-pre38"},
};

}  // namespace

std::string_view to_string(KernelImplementation implementation) {
  for (const auto& n : kImplementationNames)
    if (n.implementation == implementation) return n.name;
  return "?";
}

bool is_pao_cuda(KernelImplementation implementation) {
  return implementation == KernelImplementation::pao_cuda ||
         implementation == KernelImplementation::pao_cuda_pre38;
}

KernelImplementation parse_kernel_implementation(std::string_view text, std::string_view what) {
  std::string choices;
  for (const auto& n : kImplementationNames) {
    if (n.name == text) return n.implementation;
    choices += (choices.empty() ? "" : ", ");
    choices += n.name;
  }
  fail(what, ": '", excerpt(text), "' is not a kernel implementation (expected one of ", choices, ")");
}

std::string KernelConfig::label() const {
  std::string suffix;  // built in two steps: GCC 12's -Wrestrict misfires on "@" + std::string
  if (implementation != KernelImplementation::vllm) {
    suffix = "@";
    suffix += to_string(implementation);
  }
  switch (kind) {
    case KernelVariant::v1:
      return "v1" + suffix;
    case KernelVariant::v2:
      return "v2-" + std::to_string(partition_size) + suffix;
    case KernelVariant::prefix:
      return "prefix-" + std::to_string(block_m) + "x" + std::to_string(block_n) + suffix;
    case KernelVariant::fallback:
      return "fallback-" + std::to_string(fallback_tile) + suffix;
  }
  return "?";
}

namespace {

std::int32_t parse_int(std::string_view text, std::string_view what) {
  std::int32_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  require(ec == std::errc() && ptr == end && !text.empty(), what, ": '", excerpt(text),
          "' is not an integer");
  return value;
}

}  // namespace

std::vector<std::int32_t> parse_int_list(std::string_view text, std::string_view what) {
  std::vector<std::int32_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const auto item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    out.push_back(parse_int(item, what));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

KernelConfig parse_kernel_spec(std::string_view full_spec, const KernelConfig& defaults) {
  KernelConfig k = defaults;
  // "v1@pao-cuda": whose kernel, after the variant and its parameters (KernelConfig::label's form).
  const auto at = full_spec.find('@');
  const std::string_view spec = full_spec.substr(0, at);
  if (at != std::string_view::npos)
    k.implementation =
        parse_kernel_implementation(full_spec.substr(at + 1), "kernel '" + excerpt(full_spec) + "'");
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  const bool has_arg = colon != std::string_view::npos;
  if (name == "v1") {
    k.kind = KernelVariant::v1;
    require(!has_arg, "kernel '", excerpt(spec), "': v1 takes no parameter");
  } else if (name == "v2") {
    k.kind = KernelVariant::v2;
    if (has_arg) k.partition_size = parse_int(arg, "kernel v2:PARTITION_SIZE");
  } else if (name == "prefix") {
    k.kind = KernelVariant::prefix;
    if (has_arg) {
      const auto x = arg.find('x');
      require(x != std::string_view::npos, "kernel '", excerpt(spec),
              "': expected prefix:BLOCK_MxBLOCK_N, e.g. prefix:64x64");
      k.block_m = parse_int(arg.substr(0, x), "kernel prefix BLOCK_M");
      k.block_n = parse_int(arg.substr(x + 1), "kernel prefix BLOCK_N");
    }
  } else if (name == "fallback") {
    k.kind = KernelVariant::fallback;
    if (has_arg) k.fallback_tile = parse_int(arg, "kernel fallback:TILE_TOKENS");
  } else {
    fail("unknown kernel '", excerpt(spec),
         "' (expected v1, v2[:PARTITION], prefix[:MxN], fallback[:TILE], each with an optional @pao-cuda)");
  }
  require(k.partition_size > 0, "partition size = ", k.partition_size, ": must be positive");
  require(k.block_m > 0 && k.block_n > 0 && k.context_tile > 0, "prefix tiles ", k.block_m, "x", k.block_n,
          " (context ", k.context_tile, "): must be positive");
  require(k.fallback_tile > 0, "fallback tile = ", k.fallback_tile, ": must be positive");
  return k;
}

void validate_workload(const Workload& w) {
  require(!w.seq_lens.empty(),
          "num_seqs = 0: a workload needs at least one sequence (an empty batch launches "
          "nothing to time)");
  check_launch_shape(w, w.seq_lens.size());
  if (w.query_lens.empty())
    check_supported_head_size(w.head_size);  // decode; the Triton prefix pads any size
  require(w.query_lens.empty() || w.query_lens.size() == w.seq_lens.size(), "query_lens has ",
          w.query_lens.size(), " entries but num_seqs = ", w.num_seqs);
  require(is_activation(w.dtype), "dtype = ", dtype_name(w.dtype), ": must be f32, f16 or bf16");
  if (is_integer_cache(w.kv_cache_dtype))
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      if (const auto rule = tensor_quant_rule(w.kv_quant.of(t), w.head_size)) fail("kv_quant: ", *rule);
  for (std::size_t i = 0; i < w.seq_lens.size(); ++i) {
    require(w.seq_lens[i] >= 0, "seq_lens[", i, "] = ", w.seq_lens[i], ": negative length");
    require(w.max_seq_len == 0 || w.seq_lens[i] <= w.max_seq_len, "seq_lens[", i, "] = ", w.seq_lens[i],
            " exceeds max_seq_len = ", w.max_seq_len);
    if (!w.query_lens.empty()) {
      require(w.query_lens[i] >= 0 && w.query_lens[i] <= w.seq_lens[i], "query_lens[", i,
              "] = ", w.query_lens[i], ": must be in [0, seq_lens[", i, "] = ", w.seq_lens[i], "]");
    }
  }
}

double kv_bytes_per_element(const Workload& w) {
  const double element = static_cast<double>(dtype_size(w.kv_cache_dtype));
  if (!is_integer_cache(w.kv_cache_dtype)) return element;
  const double code = w.kv_quant.bits / 8.0;  // u4: two codes to a byte
  double params = 0;
  for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
    params += 0.5 * quant_param_bytes_per_element(w.kv_quant, t, w.head_size, w.block_size);
  return code + params;
}

Workload workload_of(const cases::Case& c) {
  const kinds::KernelKind& kind = kinds::kind_of(c);
  require(!kind.traits().variants.empty(), "case ", c.id, ": a ", kind.name(),
          " case has no kernel the simulator times");
  Workload w;
  static_cast<LaunchShape&>(w) = c;
  w.seq_lens = c.seq_lens;
  if (kind.traits().new_tokens) w.query_lens = c.query_lens;
  w.max_seq_len = c.max_seq_len;
  w.dtype = c.dtype;
  w.kv_cache_dtype = c.cache_storage_dtype();
  w.kv_quant = c.kv_quant;
  validate_workload(w);
  return w;
}

KernelConfig kernel_defaults_of(const cases::Case& c, KernelConfig k) {
  static_cast<KernelTuning&>(k) = c;
  return k;
}

}  // namespace pao::sim

// Built-in suites of pao-cuda-check and the interim case-file reader.
#include "check/check_cases.hpp"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pao/cuda/dispatch.hpp"
#include "pao/error.hpp"
#include "pao/random.hpp"

namespace pao::cuda::check {

namespace {

/// vLLM's test lengths: random in [1, max_seq_len], the last one = max_seq_len. Seeded.
std::vector<std::int32_t> random_lengths(std::int32_t num_seqs, std::int32_t max_seq_len,
                                         std::uint64_t seed) {
  Rng rng(seed ^ 0x5eed1e57u);
  std::vector<std::int32_t> lens(static_cast<std::size_t>(num_seqs));
  for (auto& l : lens) l = static_cast<std::int32_t>(rng.between(1, max_seq_len));
  if (!lens.empty()) lens.back() = max_seq_len;
  return lens;
}

CheckCase make(std::string id, DecodeCaseSpec s) {
  s.num_seqs = static_cast<std::int32_t>(s.seq_lens.size());
  CheckCase c;
  c.id = std::move(id);
  c.spec = std::move(s);
  return c;
}

CheckCase make_prefix(std::string id, PrefixCaseSpec s) {
  CheckCase c;
  c.id = std::move(id);
  c.kernel = CheckKernel::prefix;
  c.prefix = std::move(s);
  return c;
}

void add_prefix_smoke(std::vector<CheckCase>& cases) {
  {  // a mixed batch: plain prefill, context + chunk, a decode-like row, an empty query
    PrefixCaseSpec s;
    s.num_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.block_size = 16;
    s.dtype = s.kv_cache_dtype = DType::f16;
    s.context_lens = {0, 300, 77, 40};
    s.query_lens = {150, 90, 1, 0};
    s.seed = 21;
    cases.push_back(make_prefix("smoke-prefix-f16-gqa", s));
  }
  {  // fp8 cache with per-head scales, ALiBi, a block size that is not a power of two, NHD
    PrefixCaseSpec s;
    s.num_heads = 4, s.num_kv_heads = 2, s.head_size = 80, s.block_size = 10;
    s.dtype = DType::bf16;
    s.kv_cache_dtype = DType::fp8_e4m3;
    s.kv_layout = KVLayout::nhd;
    s.alibi = true;
    s.context_lens = {95, 13};
    s.query_lens = {40, 70};
    s.block_m = 32, s.block_n = 16, s.context_tile = 32;
    s.seed = 22;
    CheckCase c = make_prefix("smoke-prefix-bf16-fp8-alibi-nhd", s);
    c.k_head_scales = {0.5f, 0.25f};
    c.v_head_scales = {2.0f, 0.125f};
    cases.push_back(c);
  }
  {  // soft-cap and sliding window, f32, large logits, vLLM's 128 / 64 / 32 tiles
    PrefixCaseSpec s;
    s.num_heads = 2, s.num_kv_heads = 1, s.head_size = 256, s.block_size = 32;
    s.dtype = s.kv_cache_dtype = DType::f32;
    s.soft_cap = 20.0f;
    s.sliding_window = 48;
    s.distribution = ValueDistribution::large_logits;
    s.context_lens = {200, 0};
    s.query_lens = {130, 33};
    s.seed = 23;
    cases.push_back(make_prefix("smoke-prefix-f32-softcap-window", s));
  }
}

std::vector<CheckCase> smoke() {
  std::vector<CheckCase> cases;
  {  // GQA, three partitions, a sequence ending mid-block
    DecodeCaseSpec s;
    s.num_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.block_size = 16;
    s.dtype = s.kv_cache_dtype = DType::f16;
    s.seq_lens = {1, 37, 600, 1100};
    s.seed = 1;
    cases.push_back(make("smoke-f16-gqa", s));
  }
  {  // ALiBi, an empty sequence, partitions past every end (max_seq_len beyond the lengths)
    DecodeCaseSpec s;
    s.num_heads = 8, s.num_kv_heads = 8, s.head_size = 64, s.block_size = 32;
    s.dtype = s.kv_cache_dtype = DType::bf16;
    s.alibi = true;
    s.seq_lens = {0, 5, 513};
    s.partition_size = 256;
    s.max_seq_len = 2000;
    s.seed = 2;
    cases.push_back(make("smoke-bf16-alibi-empty", s));
  }
  {  // MQA, NHD layout, f32, head size 80, small partitions
    DecodeCaseSpec s;
    s.num_heads = 4, s.num_kv_heads = 1, s.head_size = 80, s.block_size = 8;
    s.dtype = s.kv_cache_dtype = DType::f32;
    s.kv_layout = KVLayout::nhd;
    s.seq_lens = {100, 33};
    s.partition_size = 64;
    s.seed = 3;
    cases.push_back(make("smoke-f32-mqa-nhd", s));
  }
  {  // fp8 e4m3 with per-KV-head scales
    DecodeCaseSpec s;
    s.num_heads = 8, s.num_kv_heads = 2, s.head_size = 96, s.block_size = 16;
    s.dtype = DType::f16;
    s.kv_cache_dtype = DType::fp8_e4m3;
    s.seq_lens = {300, 77};
    s.seed = 4;
    CheckCase c = make("smoke-fp8-e4m3-head-scales", s);
    c.k_head_scales = {0.5f, 0.25f};
    c.v_head_scales = {0.125f, 2.0f};
    cases.push_back(c);
  }
  {  // fp8 e5m2 under bf16, per-tensor scales, head size 256
    DecodeCaseSpec s;
    s.num_heads = 2, s.num_kv_heads = 2, s.head_size = 256, s.block_size = 32;
    s.dtype = DType::bf16;
    s.kv_cache_dtype = DType::fp8_e5m2;
    s.k_scale = 0.5f, s.v_scale = 2.0f;
    s.seq_lens = {250};
    s.seed = 5;
    cases.push_back(make("smoke-bf16-fp8-e5m2", s));
  }
  {  // soft-cap and sliding window with large logits
    DecodeCaseSpec s;
    s.num_heads = 4, s.num_kv_heads = 4, s.head_size = 112, s.block_size = 16;
    s.dtype = s.kv_cache_dtype = DType::f16;
    s.soft_cap = 30.0f;
    s.sliding_window = 100;
    s.distribution = ValueDistribution::large_logits;
    s.seq_lens = {1000, 50};
    s.partition_size = 256;
    s.seed = 6;
    cases.push_back(make("smoke-f16-softcap-window", s));
  }
  {  // f32 activations over an fp8 cache, head size 192
    DecodeCaseSpec s;
    s.num_heads = 4, s.num_kv_heads = 2, s.head_size = 192, s.block_size = 16;
    s.dtype = DType::f32;
    s.kv_cache_dtype = DType::fp8_e4m3;
    s.k_scale = 0.25f, s.v_scale = 0.5f;
    s.seq_lens = {129, 1};
    s.seed = 7;
    cases.push_back(make("smoke-f32-fp8-e4m3", s));
  }
  {  // head size 120, block size 8, near ties
    DecodeCaseSpec s;
    s.num_heads = 2, s.num_kv_heads = 1, s.head_size = 120, s.block_size = 8;
    s.dtype = s.kv_cache_dtype = DType::f16;
    s.distribution = ValueDistribution::near_ties;
    s.seq_lens = {17, 64};
    s.partition_size = 32;
    s.seed = 8;
    cases.push_back(make("smoke-f16-hs120-ties", s));
  }
  {  // one dominant token, head size 32
    DecodeCaseSpec s;
    s.num_heads = 4, s.num_kv_heads = 4, s.head_size = 32, s.block_size = 16;
    s.dtype = s.kv_cache_dtype = DType::bf16;
    s.distribution = ValueDistribution::dominant_token;
    s.seq_lens = {700, 9};
    s.seed = 9;
    cases.push_back(make("smoke-bf16-dominant", s));
  }
  {  // nothing to attend to at all
    DecodeCaseSpec s;
    s.num_heads = 2, s.num_kv_heads = 1, s.head_size = 64, s.block_size = 16;
    s.dtype = s.kv_cache_dtype = DType::f16;
    s.seq_lens = {0, 0};
    s.seed = 10;
    cases.push_back(make("smoke-f16-all-empty", s));
  }
  add_prefix_smoke(cases);
  return cases;
}

std::vector<CheckCase> vllm() {
  // Every instantiation of the dispatcher once: head size x block size x dtype x cache dtype.
  const std::int32_t heads[][2] = {{40, 40}, {64, 8}};
  const std::int32_t max_lens[] = {256, 700, 1300};
  const DType caches[] = {DType::f32 /* = dtype */, DType::fp8_e4m3, DType::fp8_e5m2};
  std::vector<CheckCase> cases;
  int i = 0;
  for (auto hs : kHeadSizes) {
    for (auto bs : kBlockSizes) {
      for (auto dt : kActivationDTypes) {
        for (auto cache : caches) {
          DecodeCaseSpec s;
          s.num_heads = heads[i % 2][0];
          s.num_kv_heads = heads[i % 2][1];
          s.head_size = hs;
          s.block_size = bs;
          s.dtype = dt;
          s.kv_cache_dtype = cache == DType::f32 ? dt : cache;
          if (is_fp8(s.kv_cache_dtype)) s.k_scale = 0.5f, s.v_scale = 0.25f;
          s.alibi = (i / 2) % 2 == 1;
          // vLLM's key cache needs head_size % (16 / sizeof(cache element)) == 0: 120 with fp8
          // only exists in the NHD layout. Every 5th case uses NHD anyway.
          const bool nhd = (is_fp8(s.kv_cache_dtype) && hs % 16 != 0) || i % 5 == 4;
          s.kv_layout = nhd ? KVLayout::nhd : KVLayout::vllm;
          s.seed = static_cast<std::uint64_t>(100 + i);
          s.seq_lens = random_lengths(7, max_lens[i % 3], s.seed);
          s.partition_size = 512;
          std::ostringstream id;
          id << "vllm-hs" << hs << "-bs" << bs << "-" << dtype_name(dt) << "-"
             << (cache == DType::f32 ? "auto" : dtype_name(cache));
          cases.push_back(make(id.str(), s));
          ++i;
        }
      }
    }
  }
  // Prefix: every instantiation (head size x dtype x cache dtype) in a mixed batch of contexts and
  // new tokens, vLLM's prefix-prefill test shapes (64 heads, 1 / 8 / 64 queries per KV head,
  // block size 32, sliding window on and off), lengths kept small for the CPU oracle.
  const std::int32_t per_kv[] = {1, 8, 64};
  int k = 0;
  for (auto hs : kHeadSizes) {
    for (auto dt : kActivationDTypes) {
      for (auto cache : caches) {
        PrefixCaseSpec s;
        s.num_heads = 64;
        s.num_kv_heads = 64 / per_kv[k % 3];
        s.head_size = hs;
        s.block_size = k % 4 == 3 ? 16 : 32;
        s.dtype = dt;
        s.kv_cache_dtype = cache == DType::f32 ? dt : cache;
        if (is_fp8(s.kv_cache_dtype)) s.k_scale = 0.5f, s.v_scale = 0.25f;
        s.alibi = k % 5 == 2;
        s.sliding_window = k % 3 == 1 ? 32 : 0;
        const bool nhd = (is_fp8(s.kv_cache_dtype) && hs % 16 != 0) || k % 7 == 6;
        s.kv_layout = nhd ? KVLayout::nhd : KVLayout::vllm;
        s.seed = static_cast<std::uint64_t>(500 + k);
        Rng rng(s.seed);
        s.context_lens.clear();
        s.query_lens.clear();
        for (int q = 0; q < 3; ++q) {
          s.context_lens.push_back(static_cast<std::int32_t>(rng.between(0, 160)));
          s.query_lens.push_back(static_cast<std::int32_t>(rng.between(1, 140)));
        }
        std::ostringstream id;
        id << "vllm-prefix-hs" << hs << "-" << dtype_name(dt) << "-"
           << (cache == DType::f32 ? "auto" : dtype_name(cache));
        cases.push_back(make_prefix(id.str(), s));
        ++k;
      }
    }
  }
  return cases;
}

}  // namespace

std::vector<std::string> suite_names() { return {"smoke", "vllm"}; }

std::vector<CheckCase> suite_cases(const std::string& name) {
  if (name == "smoke") return smoke();
  if (name == "vllm") return vllm();
  fail("--suite: unknown suite '", name, "' (built in: smoke, vllm)");
}

CheckCase parse_case_json(const std::string& text, const std::string& origin) {
  using nlohmann::json;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(origin, ": not valid JSON: ", e.what());
  }
  require(j.is_object(), origin, ": a case is a JSON object");
  static const std::set<std::string> known = {
      "id",          "kernel",         "num_seqs",       "num_heads",     "num_kv_heads",  "head_size",
      "block_size",  "dtype",          "kv_cache_dtype", "k_scale",       "v_scale",       "alibi",
      "soft_cap",    "sliding_window", "partition_size", "seed",          "num_blocks",    "seq_lens",
      "max_seq_len", "kv_layout",      "distribution",   "k_head_scales", "v_head_scales", "query_lens",
      "block_m",     "block_n",        "context_tile",   "max_query_len"};
  for (const auto& [key, value] : j.items())
    require(known.count(key) == 1, origin, ": unknown field '", key, "'");

  const auto field = [&](const char* key) -> const json& { return j.at(key); };
  const auto get_int = [&](const char* key, std::int64_t fallback) -> std::int32_t {
    if (!j.contains(key)) return static_cast<std::int32_t>(fallback);
    require(field(key).is_number_integer(), origin, ": ", key, " must be an integer");
    const auto v = field(key).get<std::int64_t>();
    require(v >= -(std::int64_t{1} << 31) && v < (std::int64_t{1} << 31), origin, ": ", key, " out of range");
    return static_cast<std::int32_t>(v);
  };
  const auto get_float = [&](const char* key, float fallback) -> float {
    if (!j.contains(key)) return fallback;
    require(field(key).is_number(), origin, ": ", key, " must be a number");
    return field(key).get<float>();
  };
  const auto get_string = [&](const char* key, const char* fallback) -> std::string {
    if (!j.contains(key)) return fallback;
    require(field(key).is_string(), origin, ": ", key, " must be a string");
    return field(key).get<std::string>();
  };
  const auto get_floats = [&](const char* key) {
    std::vector<float> v;
    if (!j.contains(key)) return v;
    require(field(key).is_array(), origin, ": ", key, " must be a list of numbers");
    for (const auto& x : field(key)) {
      require(x.is_number(), origin, ": ", key, " must be a list of numbers");
      v.push_back(x.get<float>());
    }
    return v;
  };

  const auto get_ints = [&](const char* key) {
    std::vector<std::int32_t> v;
    require(j.contains(key) && field(key).is_array(), origin, ": ", key, " must be a list of integers");
    for (const auto& x : field(key)) {
      require(x.is_number_integer(), origin, ": ", key, " must be a list of integers");
      v.push_back(x.get<std::int32_t>());
    }
    return v;
  };

  const std::string kernel = get_string("kernel", "decode");
  require(kernel == "decode" || kernel == "prefix", origin, ": kernel '", kernel,
          "': expected decode or prefix");
  CheckCase c;
  c.id = get_string("id", origin.c_str());
  c.k_head_scales = get_floats("k_head_scales");
  c.v_head_scales = get_floats("v_head_scales");
  const std::string layout = get_string("kv_layout", "vllm");
  require(layout == "vllm" || layout == "nhd", origin, ": kv_layout '", layout, "': expected vllm or nhd");
  const std::string cache = get_string("kv_cache_dtype", "auto");
  const auto seed = [&]() -> std::uint64_t {
    if (!j.contains("seed")) return 0;
    require(field("seed").is_number_unsigned() ||
                (field("seed").is_number_integer() && field("seed").get<std::int64_t>() >= 0),
            origin, ": seed must be a non-negative integer");
    return field("seed").get<std::uint64_t>();
  };
  if (kernel == "prefix") {
    static const std::set<std::string> decode_only = {"partition_size", "max_seq_len"};
    for (const auto& key : decode_only)
      require(!j.contains(key), origin, ": ", key, " is a decode field (prefix: seq_lens and query_lens)");
    c.kernel = CheckKernel::prefix;
    PrefixCaseSpec& s = c.prefix;
    s.num_heads = get_int("num_heads", 1);
    s.num_kv_heads = get_int("num_kv_heads", s.num_heads);
    s.head_size = get_int("head_size", 128);
    s.block_size = get_int("block_size", 16);
    s.dtype = parse_dtype(get_string("dtype", "f16"), "dtype");
    s.kv_cache_dtype = cache == "auto" ? s.dtype : parse_dtype(cache, "kv_cache_dtype");
    require(s.kv_cache_dtype == s.dtype || is_fp8(s.kv_cache_dtype), origin, ": kv_cache_dtype '", cache,
            "': expected auto, fp8_e4m3 or fp8_e5m2");
    s.k_scale = get_float("k_scale", 1.0f);
    s.v_scale = get_float("v_scale", 1.0f);
    if (j.contains("alibi")) {
      require(field("alibi").is_boolean(), origin, ": alibi must be true or false");
      s.alibi = field("alibi").get<bool>();
    }
    s.soft_cap = get_float("soft_cap", 0.0f);
    s.sliding_window = get_int("sliding_window", 0);
    s.num_blocks = get_int("num_blocks", 0);
    s.seed = seed();
    s.kv_layout = layout == "nhd" ? KVLayout::nhd : KVLayout::vllm;
    s.distribution = parse_value_distribution(get_string("distribution", "uniform"));
    s.block_m = get_int("block_m", 128);
    s.block_n = get_int("block_n", 64);
    s.context_tile = get_int("context_tile", 32);
    s.max_query_len = get_int("max_query_len", 0);
    const auto seq_lens = get_ints("seq_lens");
    s.query_lens = get_ints("query_lens");
    require(seq_lens.size() == s.query_lens.size(), origin, ": seq_lens has ", seq_lens.size(),
            " entries but query_lens has ", s.query_lens.size());
    s.context_lens.clear();
    for (std::size_t i = 0; i < seq_lens.size(); ++i) {
      require(s.query_lens[i] >= 0 && seq_lens[i] >= s.query_lens[i], origin, ": seq_lens[", i,
              "] = ", seq_lens[i], " must be >= query_lens[", i, "] = ", s.query_lens[i],
              " >= 0 (seq_len = context + new tokens)");
      s.context_lens.push_back(seq_lens[i] - s.query_lens[i]);
    }
    const std::int32_t n = get_int("num_seqs", static_cast<std::int64_t>(seq_lens.size()));
    require(n == static_cast<std::int32_t>(seq_lens.size()), origin, ": num_seqs = ", n, " but seq_lens has ",
            seq_lens.size(), " entries");
    return c;
  }
  for (const char* key : {"query_lens", "block_m", "block_n", "context_tile", "max_query_len"})
    require(!j.contains(key), origin, ": ", key, " is a prefix field");
  DecodeCaseSpec& s = c.spec;
  s.num_heads = get_int("num_heads", 1);
  s.num_kv_heads = get_int("num_kv_heads", s.num_heads);
  s.head_size = get_int("head_size", 128);
  s.block_size = get_int("block_size", 16);
  s.dtype = parse_dtype(get_string("dtype", "f16"), "dtype");
  s.kv_cache_dtype = cache == "auto" ? s.dtype : parse_dtype(cache, "kv_cache_dtype");
  require(s.kv_cache_dtype == s.dtype || is_fp8(s.kv_cache_dtype), origin, ": kv_cache_dtype '", cache,
          "': expected auto, fp8_e4m3 or fp8_e5m2");
  s.k_scale = get_float("k_scale", 1.0f);
  s.v_scale = get_float("v_scale", 1.0f);
  if (j.contains("alibi")) {
    require(field("alibi").is_boolean(), origin, ": alibi must be true or false");
    s.alibi = field("alibi").get<bool>();
  }
  s.soft_cap = get_float("soft_cap", 0.0f);
  s.sliding_window = get_int("sliding_window", 0);
  s.partition_size = get_int("partition_size", 512);
  s.num_blocks = get_int("num_blocks", 0);
  s.seed = seed();
  s.kv_layout = layout == "nhd" ? KVLayout::nhd : KVLayout::vllm;
  s.distribution = parse_value_distribution(get_string("distribution", "uniform"));
  if (j.contains("seq_lens")) {
    require(field("seq_lens").is_array(), origin, ": seq_lens must be a list of integers");
    s.seq_lens.clear();
    for (const auto& x : field("seq_lens")) {
      require(x.is_number_integer(), origin, ": seq_lens must be a list of integers");
      s.seq_lens.push_back(x.get<std::int32_t>());
    }
    s.max_seq_len = get_int("max_seq_len", 0);
  } else {
    require(j.contains("max_seq_len"), origin, ": give seq_lens or max_seq_len");
    const std::int32_t max_len = get_int("max_seq_len", 0);
    require(max_len >= 1, origin, ": max_seq_len must be >= 1");
    s.seq_lens = random_lengths(get_int("num_seqs", 1), max_len, s.seed);
  }
  s.num_seqs = get_int("num_seqs", static_cast<std::int64_t>(s.seq_lens.size()));
  require(s.num_seqs == static_cast<std::int32_t>(s.seq_lens.size()), origin, ": num_seqs = ", s.num_seqs,
          " but seq_lens has ", s.seq_lens.size(), " entries");
  return c;
}

CheckCase read_case_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), path, ": cannot open the case file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_case_json(text, path);
}

std::string describe(const CheckCase& c) {
  if (c.kernel == CheckKernel::prefix)
    return c.id + ": prefix " + describe(c.prefix) + (c.k_head_scales.empty() ? "" : " per-head scales");
  const DecodeCaseSpec& s = c.spec;
  std::ostringstream os;
  os << c.id << ": heads " << s.num_heads << "/" << s.num_kv_heads << ", head_size " << s.head_size
     << ", block_size " << s.block_size << ", " << dtype_name(s.dtype) << " / "
     << dtype_name(s.kv_cache_dtype) << ", " << (s.kv_layout == KVLayout::vllm ? "vllm" : "nhd")
     << " layout, seq_lens [";
  for (std::size_t i = 0; i < s.seq_lens.size(); ++i) os << (i ? "," : "") << s.seq_lens[i];
  os << "], max_seq_len " << s.max_seq_len << ", partition " << s.partition_size;
  if (s.alibi) os << ", alibi";
  if (s.soft_cap > 0) os << ", soft_cap " << s.soft_cap;
  if (s.sliding_window > 0) os << ", window " << s.sliding_window;
  if (is_fp8(s.kv_cache_dtype)) {
    if (c.k_head_scales.empty())
      os << ", k_scale " << s.k_scale << ", v_scale " << s.v_scale;
    else
      os << ", per-head scales";
  }
  os << ", " << to_string(s.distribution) << ", seed " << s.seed;
  return os.str();
}

}  // namespace pao::cuda::check

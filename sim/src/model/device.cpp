// Device descriptors: the field table, the JSON loader with its errors, overrides and validation.
#include "pao/sim/model/device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <variant>
#include <vector>

#include "pao/core/data_dir.hpp"
#include "pao/core/error.hpp"
#include "pao/core/suggest.hpp"
#include "pao/io/json_read.hpp"

namespace pao::sim {
namespace {

using Member = std::variant<std::int64_t Device::*, double Device::*>;

struct FieldSpec {
  const char* key;
  const char* unit;
  Member member;
  double min;  // inclusive
  double max;  // inclusive
};

constexpr double kHuge = 1e15;

// One row per field, in descriptor order. Bounds reject typos (a bandwidth in bytes/s instead of
// GB/s, a negative latency), not unusual hardware.
const FieldSpec kFields[] = {
    {"num_sms", "SMs", &Device::num_sms, 1, 100000},
    {"warp_size", "threads", &Device::warp_size, 1, 1024},
    {"clock_ghz", "GHz", &Device::clock_ghz, 0.01, 100},
    {"schedulers_per_sm", "schedulers", &Device::schedulers_per_sm, 1, 64},
    {"max_threads_per_sm", "threads", &Device::max_threads_per_sm, 1, 1 << 20},
    {"max_warps_per_sm", "warps", &Device::max_warps_per_sm, 1, 1 << 16},
    {"max_ctas_per_sm", "CTAs", &Device::max_ctas_per_sm, 1, 1 << 16},
    {"max_threads_per_cta", "threads", &Device::max_threads_per_cta, 1, 1 << 16},
    {"registers_per_sm", "32-bit registers", &Device::registers_per_sm, 1, 1 << 26},
    {"max_registers_per_thread", "registers", &Device::max_registers_per_thread, 1, 1 << 16},
    {"register_alloc_unit", "registers per warp", &Device::register_alloc_unit, 1, 1 << 20},
    {"shared_per_sm_bytes", "bytes", &Device::shared_per_sm_bytes, 0, 1 << 30},
    {"max_shared_per_cta_bytes", "bytes", &Device::max_shared_per_cta_bytes, 0, 1 << 30},
    {"shared_alloc_unit_bytes", "bytes", &Device::shared_alloc_unit_bytes, 1, 1 << 20},
    {"shared_reserved_per_cta_bytes", "bytes", &Device::shared_reserved_per_cta_bytes, 0, 1 << 20},
    {"dram_peak_gbps", "GB/s", &Device::dram_peak_gbps, 1e-3, 1e7},
    {"dram_achievable_gbps", "GB/s", &Device::dram_achievable_gbps, 1e-3, 1e7},
    {"sm_bandwidth_cap_gbps", "GB/s", &Device::sm_bandwidth_cap_gbps, 1e-3, 1e7},
    {"l2_size_bytes", "bytes", &Device::l2_size_bytes, 0, kHuge},
    {"l2_bandwidth_gbps", "GB/s", &Device::l2_bandwidth_gbps, 1e-3, 1e8},
    {"fp32_tflops", "TFLOP/s", &Device::fp32_tflops, 1e-6, 1e6},
    {"fp16_tflops", "TFLOP/s", &Device::fp16_tflops, 1e-6, 1e6},
    {"issue_efficiency", "fraction", &Device::issue_efficiency, 1e-4, 1},
    {"launch_latency_us", "us", &Device::launch_latency_us, 0, 1e6},
    {"inter_kernel_gap_us", "us", &Device::inter_kernel_gap_us, 0, 1e6},
    {"cta_dispatch_overhead_us", "us", &Device::cta_dispatch_overhead_us, 0, 1e6},
    {"iteration_latency_us", "us", &Device::iteration_latency_us, 0, 1e6},
    {"cycles_per_warp_instruction", "cycles", &Device::cycles_per_warp_instruction, 0, 1e4},
    {"host_op_overhead_us", "us", &Device::host_op_overhead_us, 0, 1e6},
    {"instruction_expansion_tokens", "issued per counted", &Device::instruction_expansion_tokens, 0.01, 100},
    {"instruction_expansion_cta", "issued per counted", &Device::instruction_expansion_cta, 0.01, 100},
    {"instruction_expansion_reduce_copy", "issued per counted", &Device::instruction_expansion_reduce_copy,
     0.01, 100},
    {"instruction_expansion_reduce_merge", "issued per counted", &Device::instruction_expansion_reduce_merge,
     0.01, 100},
};

const FieldSpec* find_field(std::string_view key) {
  for (const auto& f : kFields)
    if (key == f.key) return &f;
  return nullptr;
}

std::string known_keys_list() {
  std::string s;
  for (const auto& f : kFields) {
    if (!s.empty()) s += ", ";
    s += f.key;
  }
  return s;
}

bool is_integer_field(const FieldSpec& f) { return std::holds_alternative<std::int64_t Device::*>(f.member); }

void store(Device& d, const FieldSpec& f, double value, std::string_view origin) {
  require(std::isfinite(value), origin, ": field '", f.key, "' = ", value, ": not a finite number");
  require(value >= f.min && value <= f.max, origin, ": field '", f.key, "' = ", value, ": out of the range [",
          f.min, ", ", f.max, "] ", f.unit);
  if (is_integer_field(f)) {
    require(std::floor(value) == value, origin, ": field '", f.key, "' = ", value,
            ": must be a whole number of ", f.unit);
    d.*std::get<std::int64_t Device::*>(f.member) = static_cast<std::int64_t>(value);
  } else {
    d.*std::get<double Device::*>(f.member) = value;
  }
}

double load_value(const Device& d, const FieldSpec& f) {
  if (is_integer_field(f)) return static_cast<double>(d.*std::get<std::int64_t Device::*>(f.member));
  return d.*std::get<double Device::*>(f.member);
}

/// measured: a probe or microbenchmark measured it; fitted: pao sim calibrate fitted it to timings
/// (the source names the rows and the command); datasheet; assumed.
bool valid_confidence(std::string_view c) {
  return c == "measured" || c == "fitted" || c == "datasheet" || c == "assumed";
}

std::string read_text_file(const std::filesystem::path& path) {
  if (!std::ifstream(path, std::ios::binary)) fail(path.string(), ": cannot open device descriptor");
  return pao::read_text_file(path, path.string());
}

}  // namespace

const std::vector<std::string>& device_field_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& f : kFields) k.emplace_back(f.key);
    return k;
  }();
  return keys;
}

double device_field(const Device& device, std::string_view key) {
  const FieldSpec* f = find_field(key);
  require(f != nullptr, "unknown device field '", key, "' (known: ", known_keys_list(), ")");
  return load_value(device, *f);
}

void store_device_field(Device& device, std::string_view key, double value, std::string_view confidence,
                        std::string_view source) {
  const FieldSpec* f = find_field(key);
  require(f != nullptr, "unknown device field '", key, "' (known: ", known_keys_list(), ")");
  require(valid_confidence(confidence), "device field '", key, "': confidence '", excerpt(confidence),
          "' is not one of measured, fitted, datasheet, assumed");
  store(device, *f, value, "device '" + device.name + "'");
  auto& p = device.provenance[f->key];
  p.unit = f->unit;
  p.confidence = std::string(confidence);
  p.source = std::string(source);
}

void set_device_field(Device& device, std::string_view key, double value, std::string_view confidence,
                      std::string_view source) {
  store_device_field(device, key, value, confidence, source);
  validate_device(device);
}

void apply_override(Device& device, std::string_view assignment) {
  const auto eq = assignment.find('=');
  require(eq != std::string_view::npos && eq > 0 && eq + 1 < assignment.size(), "--set '", assignment,
          "': expected key=value, e.g. --set num_sms=32");
  const std::string key(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  require(end != text.c_str() && *end == '\0', "--set ", key, "=", text, ": '", text, "' is not a number");
  set_device_field(device, key, value, "assumed", "what-if override: --set " + key + "=" + text);
}

void validate_device(const Device& d) {
  const std::string who = "device '" + d.name + "'";
  require(d.dram_achievable_gbps <= d.dram_peak_gbps, who,
          ": dram_achievable_gbps = ", d.dram_achievable_gbps,
          " exceeds dram_peak_gbps = ", d.dram_peak_gbps);
  require(d.max_warps_per_sm * d.warp_size >= d.max_threads_per_sm, who,
          ": max_warps_per_sm = ", d.max_warps_per_sm, " x warp_size = ", d.warp_size,
          " holds fewer than max_threads_per_sm = ", d.max_threads_per_sm);
  require(d.max_threads_per_cta <= d.max_threads_per_sm, who,
          ": max_threads_per_cta = ", d.max_threads_per_cta,
          " exceeds max_threads_per_sm = ", d.max_threads_per_sm);
  require(d.max_shared_per_cta_bytes <= d.shared_per_sm_bytes, who,
          ": max_shared_per_cta_bytes = ", d.max_shared_per_cta_bytes,
          " exceeds shared_per_sm_bytes = ", d.shared_per_sm_bytes);
  require(d.max_registers_per_thread * d.warp_size <= d.registers_per_sm, who,
          ": max_registers_per_thread x warp_size exceeds registers_per_sm = ", d.registers_per_sm);
}

Device parse_device(std::string_view json_text, std::string_view origin_view) {
  const std::string origin(origin_view);
  const nlohmann::json j = parse_json(json_text, origin);
  require(j.is_object(), origin, ": the descriptor must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    require(key == "name" || key == "description" || key == "fields", origin, ": unknown top-level key '",
            excerpt(key), "' (expected name, description, fields)");
    (void)value;
  }
  require(j.contains("name") && j["name"].is_string() && !j["name"].get<std::string>().empty(), origin,
          ": missing string 'name'");
  require(j.contains("fields") && j["fields"].is_object(), origin, ": missing object 'fields'");
  Device d;
  d.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    require(j["description"].is_string(), origin, ": 'description' must be a string");
    d.description = j["description"].get<std::string>();
  }
  const auto& fields = j["fields"];
  for (const auto& [key, entry] : fields.items()) {
    const FieldSpec* f = find_field(key);
    require(f != nullptr, origin, ": unknown field '", excerpt(key), "' (known: ", known_keys_list(), ")");
    require(entry.is_object(), origin, ": field '", key,
            "' must be an object {value, unit, confidence, source}");
    for (const auto& [sub, unused] : entry.items()) {
      require(sub == "value" || sub == "unit" || sub == "confidence" || sub == "source", origin, ": field '",
              key, "': unknown key '", excerpt(sub), "' (expected value, unit, confidence, source)");
      (void)unused;
    }
    require(entry.contains("value") && entry["value"].is_number(), origin, ": field '", key,
            "': missing numeric 'value'");
    require(entry.contains("confidence") && entry["confidence"].is_string(), origin, ": field '", key,
            "': missing 'confidence' (measured, fitted, datasheet or assumed)");
    const auto confidence = entry["confidence"].get<std::string>();
    require(valid_confidence(confidence), origin, ": field '", key, "': confidence '", excerpt(confidence),
            "' is not one of measured, fitted, datasheet, assumed");
    require(entry.contains("source") && entry["source"].is_string() &&
                !entry["source"].get<std::string>().empty(),
            origin, ": field '", key, "': missing 'source' (say where the number comes from)");
    if (entry.contains("unit")) {
      require(entry["unit"].is_string() && entry["unit"].get<std::string>() == f->unit, origin, ": field '",
              key, "': unit must be \"", f->unit, "\"");
    }
    store(d, *f, entry["value"].get<double>(), origin);
    d.provenance[f->key] = Provenance{f->unit, confidence, entry["source"].get<std::string>()};
  }
  for (const auto& f : kFields)
    require(fields.contains(f.key), origin, ": missing field '", f.key, "' (", f.unit, ")");
  try {
    validate_device(d);
  } catch (const Error& e) {
    fail(origin, ": ", e.what());
  }
  return d;
}

std::vector<std::string> known_device_names() {
  std::vector<std::string> names;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(data_dir()) / "devices";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Device load_device(std::string_view name_or_path) {
  const std::string arg(name_or_path);
  require(!arg.empty(), "--device: empty name");
  const bool is_path =
      arg.find('/') != std::string::npos || (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".json") == 0);
  std::filesystem::path path = arg;
  if (!is_path) {
    path = std::filesystem::path(data_dir()) / "devices" / (arg + ".json");
    if (!std::filesystem::exists(path)) {
      const auto names = known_device_names();
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      fail("unknown device '", arg, "'", did_you_mean(arg, names),
           "; known: ", known.empty() ? "none found" : known, " in ", data_dir().string(),
           "/devices; or pass a path to a descriptor .json");
    }
  }
  return parse_device(read_text_file(path), path.string());
}

std::string device_to_json(const Device& d) {
  nlohmann::ordered_json j;
  j["name"] = d.name;
  j["description"] = d.description;
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  for (const auto& f : kFields) {
    nlohmann::ordered_json e;
    if (is_integer_field(f))
      e["value"] = d.*std::get<std::int64_t Device::*>(f.member);
    else
      e["value"] = d.*std::get<double Device::*>(f.member);
    const auto it = d.provenance.find(f.key);
    e["unit"] = f.unit;
    e["confidence"] = it != d.provenance.end() ? it->second.confidence : "assumed";
    e["source"] = it != d.provenance.end() ? it->second.source : "not recorded";
    fields[f.key] = e;
  }
  j["fields"] = fields;
  return j.dump(2) + "\n";
}

}  // namespace pao::sim

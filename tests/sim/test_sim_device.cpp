// Device descriptors: the shipped files load and carry provenance; bad files fail with clear errors;
// overrides; the occupancy-calculator rule.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pao/core/error.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/occupancy.hpp"

using namespace pao::sim;

namespace {

std::string bi_v100_text() { return device_to_json(load_device("bi-v100")); }

/// The BI-V100 descriptor with one edit applied to its JSON.
std::string edited(void (*edit)(nlohmann::json&)) {
  auto j = nlohmann::json::parse(bi_v100_text());
  edit(j);
  return j.dump();
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_device(text, "test.json");
  } catch (const pao::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sim device: every shipped descriptor loads, every field has a source and a confidence") {
  for (const char* name : {"bi-v100", "a100-40gb", "h100-sxm", "h200"}) {
    INFO(name);
    const Device d = load_device(name);
    CHECK(d.name == name);
    for (const auto& key : device_field_keys()) {
      INFO(key);
      const auto it = d.provenance.find(key);
      REQUIRE(it != d.provenance.end());
      CHECK(!it->second.source.empty());
      CHECK((it->second.confidence == "measured" || it->second.confidence == "fitted" ||
             it->second.confidence == "datasheet" || it->second.confidence == "assumed"));
    }
  }
  const Device bi = load_device("bi-v100");
  CHECK(bi.num_sms == 16);
  CHECK(bi.warp_size == 64);
  CHECK(bi.dram_peak_gbps == 1200);
  CHECK(bi.dram_achievable_gbps == 584.2);
  CHECK(bi.launch_latency_us == 6.2);
}

TEST_CASE("sim device: JSON round trip") {
  const Device a = load_device("h200");
  const Device b = parse_device(device_to_json(a), "roundtrip");
  for (const auto& key : device_field_keys()) CHECK(device_field(a, key) == device_field(b, key));
  CHECK(a.provenance.at("num_sms").source == b.provenance.at("num_sms").source);
}

TEST_CASE("sim device: bad descriptors name the field and the rule") {
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["num_smz"] = j["fields"]["num_sms"];
        })).find("unknown field 'num_smz'") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"].erase("clock_ghz");
        })).find("missing field 'clock_ghz'") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["num_sms"]["value"] = -3;
        })).find("'num_sms' = -3") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["num_sms"]["value"] = 16.5;
        })).find("whole number") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["warp_size"]["confidence"] = "probably";
        })).find("confidence 'probably'") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["warp_size"].erase("source");
        })).find("missing 'source'") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["dram_peak_gbps"]["unit"] = "TB/s";
        })).find("unit must be \"GB/s\"") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) {
          j["fields"]["dram_achievable_gbps"]["value"] = 5000;
        })).find("exceeds dram_peak_gbps") != std::string::npos);
  CHECK(error_of(edited([](nlohmann::json& j) { j["extra"] = 1; })).find("unknown top-level key 'extra'") !=
        std::string::npos);
  CHECK(error_of("{\"name\": \"x\", ").find("invalid JSON") != std::string::npos);
  CHECK(error_of("[1, 2]").find("must be a JSON object") != std::string::npos);
}

TEST_CASE("sim device: unknown names list the known ones; overrides") {
  try {
    (void)load_device("bi-v200");
    FAIL("expected an error");
  } catch (const pao::Error& e) {
    CHECK(std::string(e.what()).find("bi-v100") != std::string::npos);
  }
  Device d = load_device("bi-v100");
  apply_override(d, "num_sms=32");
  CHECK(d.num_sms == 32);
  CHECK(d.provenance.at("num_sms").confidence == "assumed");
  CHECK(d.provenance.at("num_sms").source.find("--set num_sms=32") != std::string::npos);
  CHECK_THROWS_WITH_AS(apply_override(d, "num_smz=3"), doctest::Contains("unknown device field 'num_smz'"),
                       pao::Error);
  CHECK_THROWS_WITH_AS(apply_override(d, "num_sms=many"), doctest::Contains("not a number"), pao::Error);
  CHECK_THROWS_WITH_AS(apply_override(d, "num_sms"), doctest::Contains("expected key=value"), pao::Error);
  CHECK_THROWS_WITH_AS(apply_override(d, "dram_achievable_gbps=2000"),
                       doctest::Contains("exceeds dram_peak_gbps"), pao::Error);
}

TEST_CASE("sim occupancy: the calculator's rule and its limiter") {
  const Device a100 = load_device("a100-40gb");
  // 128 threads x 64 registers: 2048 registers per warp, 32 warps fit, 8 CTAs of 4 warps.
  Occupancy o = compute_occupancy(a100, {128, 64, 0});
  CHECK(o.ctas_per_sm == 8);
  CHECK(o.limiter == "registers");
  // 65 registers round up to 2304 per warp (unit 256): 28 warps, 7 CTAs.
  CHECK(compute_occupancy(a100, {128, 65, 0}).ctas_per_sm == 7);
  // 48 KiB of shared memory + 1 KiB reserved: 3 CTAs in 164 KiB.
  o = compute_occupancy(a100, {128, 32, 48 * 1024});
  CHECK(o.ctas_per_sm == 3);
  CHECK(o.limiter == "shared memory");
  // Tiny CTAs hit the 32-CTA limit; 1024-thread CTAs hit the warp limit.
  CHECK(compute_occupancy(a100, {32, 16, 0}).limiter == "CTA limit");
  o = compute_occupancy(a100, {1024, 32, 0});
  CHECK(o.ctas_per_sm == 2);
  CHECK(o.limiter == "warps");
  // Does not fit at all.
  CHECK_FALSE(compute_occupancy(a100, {128, 32, 200 * 1024}).fits());
  CHECK_FALSE(compute_occupancy(a100, {2048, 32, 0}).fits());
  CHECK_FALSE(compute_occupancy(a100, {128, 300, 0}).fits());
  // Warp size 64: 128 threads are 2 warps.
  CHECK(compute_occupancy(load_device("bi-v100"), {128, 64, 0}).warps_per_cta == 2);
}

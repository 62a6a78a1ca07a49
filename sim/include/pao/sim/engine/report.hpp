// Human and JSON reports of a simulation (what `pao sim run` prints).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"

namespace pao::sim {

/// A table: one row per kernel (time, CTAs, occupancy and its limiter, waves, bandwidth, SM
/// utilisation) and the total.
std::string format_result(const SimResult& result, const Device& device);

/// {"ok", "device", "kernel", "workload", "time_us", "dram_bytes", "kernels": [{"name", "time_us",
/// "busy_us", "ctas", "waves", "full_waves", "ctas_per_sm", "occupancy_limiter", "achieved_gbps",
/// "sm_utilisation", "dram_bytes", "start_us", "end_us"}]}
nlohmann::ordered_json result_to_json(const SimResult& result, const Device& device, const Workload& workload,
                                      const KernelConfig& kernel);

/// One-line device summary: "bi-v100: 16 SMs x warp 64, 580/1200 GB/s, launch 6 us".
std::string device_summary(const Device& device);

}  // namespace pao::sim

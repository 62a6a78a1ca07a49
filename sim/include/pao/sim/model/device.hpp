// Device descriptors: the numbers the simulator knows about a GPU, each with the source it came
// from and how far to trust it. Loaded from data/devices/<name>.json (or any path) and changed for a
// what-if with `--set key=value`. Passed explicitly everywhere: there is no global device.
//
// JSON form (every field required, no other field allowed):
//   { "name": "bi-v100", "description": "...",
//     "fields": { "num_sms": { "value": 16, "unit": "SMs", "confidence": "datasheet",
//                              "source": "project brief" }, ... } }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pao::sim {

/// Where a number came from: `measured`, `datasheet` or `assumed`, and a sentence saying why.
struct Provenance {
  std::string unit;
  std::string confidence;
  std::string source;
};

struct Device {
  std::string name;
  std::string description;

  // Streaming multiprocessors and their per-SM limits (the occupancy calculator's inputs).
  std::int64_t num_sms = 0;
  std::int64_t warp_size = 0;
  double clock_ghz = 0;
  std::int64_t schedulers_per_sm = 0;  // warp schedulers: warp instructions issued per clock, at most
  std::int64_t max_threads_per_sm = 0;
  std::int64_t max_warps_per_sm = 0;
  std::int64_t max_ctas_per_sm = 0;
  std::int64_t max_threads_per_cta = 0;
  std::int64_t registers_per_sm = 0;
  std::int64_t max_registers_per_thread = 0;
  std::int64_t register_alloc_unit = 0;  // registers, allocated per warp in these units
  std::int64_t shared_per_sm_bytes = 0;
  std::int64_t max_shared_per_cta_bytes = 0;
  std::int64_t shared_alloc_unit_bytes = 0;
  std::int64_t shared_reserved_per_cta_bytes = 0;

  // Memory system.
  double dram_peak_gbps = 0;         // GB/s = 1e9 bytes/s
  double dram_achievable_gbps = 0;   // the global cap the engine shares among CTAs
  double sm_bandwidth_cap_gbps = 0;  // what one SM can pull from L2/DRAM
  std::int64_t l2_size_bytes = 0;
  double l2_bandwidth_gbps = 0;  // caps logical (pre-L2) bytes, e.g. GQA re-reads

  // Arithmetic.
  double fp32_tflops = 0;  // CUDA-core FMA throughput (decode kernels, reduce, fallback ops)
  double fp16_tflops = 0;  // matrix (tensor-core) throughput (prefix kernel's dot products)
  /// Fraction of the peak issue rate (schedulers x clock) a kernel's instruction stream sustains
  /// (dependencies, shared-memory and shuffle latencies); fitted by `pao sim calibrate`.
  double issue_efficiency = 0;

  // Latencies and overheads.
  double launch_latency_us = 0;         // host launch -> first CTA running, empty kernel
  double inter_kernel_gap_us = 0;       // end of a kernel -> start of the dependent next one
  double cta_dispatch_overhead_us = 0;  // per CTA: dispatch, prologue, epilogue
  double iteration_latency_us = 0;      // floor per dependent iteration (block-table -> K/V load)
  /// Cycles between a lone warp's consecutive instructions in program order (dependencies its
  /// code does not hide): a CTA takes at least its warps' instructions x this. 0: no such floor
  /// (the issue rate and the iteration latency stand for it, as for scheduled SASS).
  double cycles_per_warp_instruction = 0;
  double host_op_overhead_us = 0;  // framework cost per op on the host (fallback path)

  // What the device issues per instruction of the model's count of vLLM's decode kernels, phase
  // by phase (InstructionScale's parts): the model counts operations, a device runs what a
  // compiler made of them. GPGPU-Sim runs PTX, measured with vLLM's own kernels; a hardware
  // descriptor's fitted rates absorb its machine code's factor (1 there). Implementations'
  // factors (pao's kernels) are relative to vLLM's kernel on the same device.
  double instruction_expansion_tokens = 1;        // Q·K, P·V, the softmax: what grows with tokens
  double instruction_expansion_cta = 1;           // an attention CTA's fixed part
  double instruction_expansion_reduce_copy = 1;   // a V2 reduce CTA of one partition
  double instruction_expansion_reduce_merge = 1;  // a V2 reduce CTA of two or more

  /// Unit, confidence and source of every numeric field, by key.
  std::map<std::string, Provenance> provenance;

  double per_sm_fp32_flops() const { return fp32_tflops * 1e12 / static_cast<double>(num_sms); }
  double per_sm_fp16_flops() const { return fp16_tflops * 1e12 / static_cast<double>(num_sms); }
  /// Warp instructions one SM issues per second: schedulers x clock x issue_efficiency.
  double per_sm_issue_rate() const {
    return static_cast<double>(schedulers_per_sm) * clock_ghz * 1e9 * issue_efficiency;
  }
};

/// The keys of all numeric fields, in descriptor order.
const std::vector<std::string>& device_field_keys();
/// Value of a numeric field by key (integers widened); throws pao::Error on an unknown key.
double device_field(const Device& device, std::string_view key);
/// Sets a numeric field by key and re-validates the device; records `source` with confidence
/// `confidence`. Throws pao::Error naming the key on an unknown key or a bad value.
void set_device_field(Device& device, std::string_view key, double value, std::string_view confidence,
                      std::string_view source);
/// set_device_field without the cross-field check: for setting several fields that only agree
/// together (call validate_device after the last).
void store_device_field(Device& device, std::string_view key, double value, std::string_view confidence,
                        std::string_view source);
/// Applies one `key=value` override (a what-if) to the device.
void apply_override(Device& device, std::string_view assignment);

/// Parses a descriptor from JSON text. `origin` names the file in error messages.
Device parse_device(std::string_view json_text, std::string_view origin);
/// Loads by name (data/devices/<name>.json, or $PAO_DATA_DIR/devices) or by path (anything with
/// a '/' or ending in ".json"). An unknown name lists the known ones.
Device load_device(std::string_view name_or_path);
/// Names of the descriptors shipped in the data directory.
std::vector<std::string> known_device_names();

/// Serialises back to the descriptor JSON format (round-trips through parse_device).
std::string device_to_json(const Device& device);
/// Checks the cross-field rules (achievable <= peak, warps vs threads, ...); throws pao::Error.
void validate_device(const Device& device);

}  // namespace pao::sim

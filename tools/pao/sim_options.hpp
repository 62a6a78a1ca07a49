// Command-line options shared by the `pao sim` subcommands (CLI11): the device (--device, --set),
// the workload (--num-seqs ... or --case: a case JSON or a golden, read by pao's case model) and
// the kernel's tuning parameters.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "pao/sim/model/device.hpp"
#include "pao/sim/model/workload.hpp"
#include "pao/sim/studies/calibrate.hpp"

namespace pao::sim {

struct DeviceOptions {
  std::string device = "bi-v100";
  std::vector<std::string> sets;

  void add_to(CLI::App& app);
  /// Loads the descriptor and applies every --set in order.
  Device load() const;
};

/// What `pao sim calibrate` and `pao sim validate` share: the measurement files, the descriptor
/// fields a fit moves and its effort, JSON output.
struct FitOptions {
  std::vector<std::string> measurements;
  std::vector<std::string> parameters;
  int max_iterations = 30;
  int jobs = 0;
  bool json = false;

  /// `per_fit` names the fits --max-iterations applies to ("per LOGO fit" or "").
  void add_to(CLI::App& app, const char* json_help, const char* per_fit);
  /// The rows of every --measurements file; throws pao::Error when none is given (`command` names
  /// the command in the message).
  std::vector<Measurement> load(const char* command) const;
  std::string origin() const { return measurements_origin(measurements); }
};

struct WorkloadOptions {
  std::string case_file;  // a case JSON or a golden (.safetensors / npy folder)
  std::int32_t num_seqs = 8;
  std::int32_t num_heads = 32;
  std::int32_t num_kv_heads = 0;  // 0: = num_heads
  std::int32_t head_size = 128;
  std::int32_t block_size = 16;
  std::int32_t seq_len = 4096;
  std::string seq_lens;        // "a,b,c" overrides seq_len and num_seqs
  std::int32_t query_len = 0;  // prefix: new tokens per sequence (0 = 1, decode)
  std::string query_lens;
  std::int32_t max_seq_len = 0;
  std::string dtype = "f16";
  std::string kv_cache_dtype = "auto";

  void add_to(CLI::App& app);
  /// The case the options describe: --case's, or one built from the flags (a decode case, or a
  /// prefix case when --query-len(s) give new tokens).
  cases::Case to_case() const;
  Workload build() const { return workload_of(to_case()); }
  bool has_case() const { return !case_file.empty(); }
};

struct KernelOptions {
  CLI::App* app = nullptr;  // to tell flags given from defaults
  KernelConfig flags;       // the flags' values (vLLM's tuning by default)

  void add_to(CLI::App& app);
  /// The defaults every kernel spec ("v2:1024", ...) starts from: the flags, with `from_case`'s
  /// tuning parameters in place of those not given on the command line.
  KernelConfig defaults(const cases::Case* from_case = nullptr) const;
};

}  // namespace pao::sim

// pao-cuda-check: runs decode and prefix cases on the GPU and compares every tensor with pao's oracle —
// kernel precision bit for bit (0 ULP), exact precision within FlashAttention's derived bound —
// after checking the shared numerics (kernel_exp, kernel_tanh, roundings, decodes) on the device.
//
// Exit: 0 every tensor matches; 1 a mismatch or overwritten guard bytes; 2 bad usage or input;
// 3 a CUDA error; 77 no usable CUDA device (nothing was checked; ctest reports a skip).
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "check/device_math.hpp"
#include "check/gpu_run.hpp"
#include "check/tensor_report.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/error.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/kernels/prefix_attention.hpp"
#include "pao/numerics/formats.hpp"
#include "pao/numerics/kernel_math.hpp"

namespace {

using namespace pao;
using namespace pao::cuda::check;

constexpr int kExitMismatch = 1, kExitUsage = 2, kExitCuda = 3, kExitNoGpu = 77;

struct Options {
  std::string suite;
  bool full = false;
  std::vector<std::string> case_files;
  bool list = false;
  bool exact = true;
  bool math = true;
  bool quiet = false;
};

void usage(std::FILE* to) {
  std::fprintf(
      to,
      "usage: pao-cuda-check (--suite NAME [--full] | --case FILE...) [--list] [--no-exact] [--no-math]\n"
      "                      [--quiet]\n"
      "  --suite NAME  a suite of data/cases (or a suite .json path), as `pao golden` takes it: smoke,\n"
      "                edges (every edge once), instances (with --full: every kernel instantiation), vllm,\n"
      "                fp8, ...\n"
      "  --full        the suite's full product instead of its pairwise cover\n"
      "  --case FILE   a decode or prefix case JSON (docs/golden.md), e.g. a golden's case; repeatable\n"
      "  --list        print the cases and exit (no GPU needed)\n"
      "  --no-exact    skip the comparison with the exact precision\n"
      "  --no-math     skip the device check of kernel_exp, kernel_tanh, roundings and decodes\n"
      "  --quiet       print failures and the summary only\n"
      "Compares v1.out, v2.out, v2.tmp_out, v2.max_logits, v2.exp_sums (decode) and prefix.out with\n"
      "pao's kernel precision bit for bit. Exit 0 all match, 1 mismatch, 2 bad usage/input, 3 CUDA\n"
      "error, 77 no CUDA device.\n");
}

struct Tally {
  int passed = 0, failed = 0;
  bool quiet = false;
  void add(bool ok, const std::string& line) {
    ok ? ++passed : ++failed;
    if (!ok || !quiet) std::printf("%s\n", line.c_str());
  }
  void add(const TensorReport& r, const Shape& shape) { add(r.passed, format(r, shape)); }
};

template <typename T>
std::uint64_t bits_of(T v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

/// One line per function: the device values against the host's, bit for bit (NaN = NaN).
template <typename T, typename Host>
void compare_values(Tally& t, const char* name, const std::vector<float>& inputs,
                    const std::vector<T>& device, Host host, bool skip_nan_inputs) {
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < device.size(); ++i) {
    const float x = inputs.empty() ? 0.0f : inputs[i];
    if (skip_nan_inputs && x != x) continue;
    const T want = host(i);
    const bool both_nan = [&] {
      if constexpr (std::is_floating_point_v<T>)
        return want != want && device[i] != device[i];
      else
        return false;
    }();
    if (bits_of(want) != bits_of(device[i]) && !both_nan) {
      if (mismatches++ == 0) first = i;
    }
  }
  char line[256];
  if (mismatches == 0)
    std::snprintf(line, sizeof line, "PASS math %s: %zu values bit-identical", name, device.size());
  else
    std::snprintf(line, sizeof line, "FAIL math %s: %zu of %zu values differ (first at input #%zu)", name,
                  mismatches, device.size(), first);
  t.add(mismatches == 0, line);
}

void check_math(Tally& t) {
  // 2^24 floats spread over every exponent, both signs, plus the special values.
  std::vector<float> x;
  x.reserve((std::size_t{1} << 24) + 8);
  for (std::uint32_t i = 0; i < (1u << 24); ++i) {
    const std::uint32_t bits = i * 256u + (i * 7919u) % 256u;
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 88.72283935546875f, -103.97908782958984f, 65504.0f, 65520.0f})
    x.push_back(f);
  const DeviceMath d = run_device_math(x);
  compare_values(
      t, "kernel_exp", x, d.exp, [&](std::size_t i) { return kernel_exp(x[i]); }, false);
  compare_values(
      t, "kernel_tanh", x, d.tanh, [&](std::size_t i) { return kernel_tanh(x[i]); }, false);
  compare_values(
      t, "round to f16", x, d.f16, [&](std::size_t i) { return encode_f16_from_f32(x[i]); }, true);
  compare_values(
      t, "round to bf16", x, d.bf16, [&](std::size_t i) { return encode_bf16_from_f32(x[i]); }, true);
  const std::vector<float> none;
  compare_values(
      t, "decode f16", none, d.f16_decoded,
      [](std::size_t i) { return decode_f16(static_cast<std::uint16_t>(i)); }, false);
  compare_values(
      t, "decode bf16", none, d.bf16_decoded,
      [](std::size_t i) { return decode_bf16(static_cast<std::uint16_t>(i)); }, false);
  compare_values(
      t, "decode fp8_e4m3", none, d.e4m3_decoded,
      [](std::size_t i) { return decode_fp8_e4m3(static_cast<std::uint8_t>(i)); }, false);
  compare_values(
      t, "decode fp8_e5m2", none, d.e5m2_decoded,
      [](std::size_t i) { return decode_fp8_e5m2(static_cast<std::uint8_t>(i)); }, false);
}

/// Runs one prefix case; false when its input is bad (the oracle rejects it).
bool check_prefix_case(Tally& t, const cases::Case& cc, bool with_exact) {
  cases::PrefixCase c;
  PrefixArgs args;
  PrefixOutputs kernel;
  try {
    c = cases::make_prefix_case(cc);
    args = c.args();
    kernel = prefix_attention(args, Precision::kernel);
  } catch (const Error& e) {
    t.add(false, "FAIL " + cc.id + ": bad case: " + e.what());
    return false;
  }
  GpuPrefixOutputs g;
  try {
    g = run_prefix_on_gpu(c, args.options);
  } catch (const CudaError&) {
    throw;
  } catch (const Error& e) {
    t.add(false, "FAIL " + cc.id + " prefix: " + e.what());
    return true;
  }
  t.add(compare_bitwise(cc.id, "prefix.out", kernel.out, g.out), kernel.out.shape());
  for (const auto& failure : g.guard_failures) t.add(false, "FAIL " + cc.id + " prefix " + failure);
  if (with_exact) {
    const PrefixOutputs exact = prefix_attention(args, Precision::exact);
    t.add(compare_to_exact(cc.id, "prefix.out", exact.out_f64, kernel.out, g.out), kernel.out.shape());
  }
  return true;
}

/// Runs one decode case (V1 and V2); false when its input is bad (the oracle rejects it).
bool check_case(Tally& t, const cases::Case& cc, bool with_exact) {
  if (cc.kernel == cases::CaseKernel::prefix) return check_prefix_case(t, cc, with_exact);
  if (cc.kernel == cases::CaseKernel::reshape_and_cache) {  // pao's CUDA kernels are attention kernels
    std::printf("skip  %s: a reshape_and_cache case (pao has no CUDA cache-write kernel)\n", cc.id.c_str());
    return true;
  }
  cases::DecodeCase c;
  DecodeArgs args;
  DecodeOutputs v1k, v2k;
  try {
    c = cases::make_decode_case(cc);
    args = c.args();
    v1k = paged_attention_v1(args, Precision::kernel);
    v2k = paged_attention_v2(args, Precision::kernel);
  } catch (const Error& e) {
    t.add(false, "FAIL " + cc.id + ": bad case: " + e.what());
    return false;
  }

  // A launcher Status (e.g. V1 over the shared-memory limit) fails the kernel's tensors; a CUDA
  // error (CudaError) propagates and stops the run.
  const auto run = [&](DecodeKernel kernel, GpuDecodeOutputs& g) {
    try {
      g = run_decode_on_gpu(kernel, c, args.options);
      return true;
    } catch (const CudaError&) {
      throw;
    } catch (const Error& e) {
      t.add(false, "FAIL " + cc.id + " " + to_string(kernel) + ": " + e.what());
      return false;
    }
  };
  GpuDecodeOutputs v1g, v2g;
  const bool v1_ran = run(DecodeKernel::v1, v1g);
  const bool v2_ran = run(DecodeKernel::v2, v2g);
  if (v1_ran) t.add(compare_bitwise(cc.id, "v1.out", v1k.out, v1g.out), v1k.out.shape());
  if (v2_ran) {
    t.add(compare_bitwise(cc.id, "v2.tmp_out", v2k.tmp_out, v2g.tmp_out), v2k.tmp_out.shape());
    t.add(compare_bitwise(cc.id, "v2.max_logits", v2k.max_logits, v2g.max_logits), v2k.max_logits.shape());
    t.add(compare_bitwise(cc.id, "v2.exp_sums", v2k.exp_sums, v2g.exp_sums), v2k.exp_sums.shape());
    t.add(compare_bitwise(cc.id, "v2.out", v2k.out, v2g.out), v2k.out.shape());
  }
  for (const auto* g : {&v1g, &v2g})
    for (const auto& failure : g->guard_failures)
      t.add(false, "FAIL " + cc.id + (g == &v1g ? " v1 " : " v2 ") + failure);
  if (with_exact) {
    if (v1_ran) {
      const DecodeOutputs v1x = paged_attention_v1(args, Precision::exact);
      t.add(compare_to_exact(cc.id, "v1.out", v1x.out_f64, v1k.out, v1g.out), v1k.out.shape());
    }
    if (v2_ran) {
      const DecodeOutputs v2x = paged_attention_v2(args, Precision::exact);
      t.add(compare_to_exact(cc.id, "v2.out", v2x.out_f64, v2k.out, v2g.out), v2k.out.shape());
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--suite" && has_value)
      o.suite = argv[++i];
    else if (a == "--full")
      o.full = true;
    else if (a == "--case" && has_value)
      o.case_files.push_back(argv[++i]);
    else if (a == "--list")
      o.list = true;
    else if (a == "--no-exact")
      o.exact = false;
    else if (a == "--no-math")
      o.math = false;
    else if (a == "--quiet")
      o.quiet = true;
    else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "pao-cuda-check: unexpected argument '%s'\n", a.c_str());
      usage(stderr);
      return kExitUsage;
    }
  }
  if (o.suite.empty() == o.case_files.empty()) {
    std::fprintf(stderr, "pao-cuda-check: give --suite NAME or --case FILE\n");
    usage(stderr);
    return kExitUsage;
  }

  std::vector<cases::Case> cases;
  try {
    if (!o.suite.empty()) cases = cases::expand_suite(cases::find_suite(o.suite, cases::cases_dir()), o.full);
    for (const auto& f : o.case_files) cases.push_back(cases::load_case_file(f));
  } catch (const Error& e) {
    std::fprintf(stderr, "pao-cuda-check: %s\n", e.what());
    return kExitUsage;
  }
  if (o.list) {
    for (const auto& c : cases) std::printf("%s: %s\n", c.id.c_str(), cases::describe(c).c_str());
    return 0;
  }

  std::string why;
  if (!cuda_device_available(why)) {
    std::printf("pao-cuda-check: SKIPPED, no usable CUDA device (%s): nothing was checked\n", why.c_str());
    return kExitNoGpu;
  }
  std::printf("pao-cuda-check: %s, %zu case(s)\n", cuda_device_name().c_str(), cases.size());

  Tally t;
  t.quiet = o.quiet;
  int bad_input = 0;
  try {
    if (o.math) check_math(t);
    for (const auto& c : cases)
      if (!check_case(t, c, o.exact)) ++bad_input;
  } catch (const CudaError& e) {
    std::printf("pao-cuda-check: CUDA error, stopping: %s\n", e.what());
    std::printf("%d passed, %d failed\n", t.passed, t.failed + 1);
    return kExitCuda;
  }
  std::printf("%d passed, %d failed\n", t.passed, t.failed);
  if (t.failed == 0) return 0;
  return bad_input == t.failed ? kExitUsage : kExitMismatch;  // only bad cases: the input's fault
}

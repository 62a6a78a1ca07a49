// Device buffers with guards, and one decode or prefix case through the CUDA launchers.
#include "check/gpu_run.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

#include "check/case_params.hpp"
#include "pao/core/error.hpp"
#include "pao/cuda/paged_attention_cuda.hpp"
#include "pao/cuda/prefix_attention_cuda.hpp"

namespace pao::cuda::check {

namespace {

void cuda_check(cudaError_t e, const char* what) { throw_if_cuda_error(static_cast<int>(e), what); }

/// `bytes` of device memory between two guard zones of kGuard bytes.
class DeviceBuffer {
 public:
  static constexpr std::size_t kGuard = 256;  // keeps the data 256-byte aligned, as cudaMalloc's

  DeviceBuffer(std::size_t bytes, unsigned char fill, unsigned char guard) : bytes_(bytes), guard_(guard) {
    void* base = nullptr;
    cuda_check(cudaMalloc(&base, bytes_ + 2 * kGuard), "cudaMalloc");
    base_ = static_cast<unsigned char*>(base);
    cuda_check(cudaMemset(base_, guard_, kGuard), "cudaMemset");
    cuda_check(cudaMemset(base_ + kGuard, fill, bytes_), "cudaMemset");
    cuda_check(cudaMemset(base_ + kGuard + bytes_, guard_, kGuard), "cudaMemset");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(base_); }

  void* data() const { return base_ + kGuard; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data());
  }
  void upload(const void* src) {
    cuda_check(cudaMemcpy(data(), src, bytes_, cudaMemcpyHostToDevice), "upload");
  }
  void download(void* dst) const {
    cuda_check(cudaMemcpy(dst, data(), bytes_, cudaMemcpyDeviceToHost), "download");
  }
  /// Empty when both guard zones are intact.
  std::string check_guards(const std::string& name) const {
    unsigned char zone[kGuard];
    std::ostringstream os;
    for (int side = 0; side < 2; ++side) {
      const unsigned char* at = side == 0 ? base_ : base_ + kGuard + bytes_;
      cuda_check(cudaMemcpy(zone, at, kGuard, cudaMemcpyDeviceToHost), "download guard");
      std::size_t changed = 0, nearest = kGuard;
      for (std::size_t i = 0; i < kGuard; ++i) {
        if (zone[i] == guard_) continue;
        ++changed;
        const std::size_t distance = side == 0 ? kGuard - i : i + 1;
        nearest = distance < nearest ? distance : nearest;
      }
      if (changed)
        os << (os.tellp() > 0 ? "; " : "") << name << ": " << changed << " guard bytes overwritten "
           << (side == 0 ? "before the start" : "after the end") << " (the nearest " << nearest
           << " bytes away)";
    }
    return os.str();
  }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_;
  unsigned char guard_;
};

constexpr unsigned char kNaNBytes = 0xFF;  // all-ones: NaN in f32, f16, bf16 and both fp8 flavours
constexpr unsigned char kGuardBytes = 0xA5;

std::unique_ptr<DeviceBuffer> upload(const void* data, std::size_t bytes, unsigned char guard) {
  auto b = std::make_unique<DeviceBuffer>(bytes, 0, guard);
  if (bytes) b->upload(data);
  return b;
}

/// The paged cache and scalars of a case on the device, pointed to by p: both caches between
/// NaN bytes (a stray read shows up as NaN), the block tables, ALiBi slopes and per-head scales
/// between guard bytes.
struct DevicePagedCache {
  std::unique_ptr<DeviceBuffer> key_cache, value_cache, block_tables, alibi, k_head_scales, v_head_scales;

  DevicePagedCache(const Tensor& kc, const Tensor& vc, const Tensor& tables, const AttentionOptions& options,
                   PagedAttentionParams& p) {
    key_cache = std::make_unique<DeviceBuffer>(kc.nbytes(), 0, kNaNBytes);
    value_cache = std::make_unique<DeviceBuffer>(vc.nbytes(), 0, kNaNBytes);
    if (kc.nbytes()) key_cache->upload(kc.bytes());
    if (vc.nbytes()) value_cache->upload(vc.bytes());
    block_tables = upload(tables.bytes(), tables.nbytes(), kGuardBytes);
    if (options.alibi_slopes.data != nullptr) {
      require(options.alibi_slopes.dtype == DType::f32 && options.alibi_slopes.is_contiguous(),
              "alibi_slopes: the harness uploads contiguous f32 slopes");
      alibi = upload(options.alibi_slopes.data, static_cast<std::size_t>(options.alibi_slopes.numel()) * 4,
                     kGuardBytes);
    }
    if (!options.k_head_scales.empty())
      k_head_scales = upload(options.k_head_scales.data(), options.k_head_scales.size() * 4, kGuardBytes);
    if (!options.v_head_scales.empty())
      v_head_scales = upload(options.v_head_scales.data(), options.v_head_scales.size() * 4, kGuardBytes);
    p.key_cache = key_cache->data();
    p.value_cache = value_cache->data();
    p.block_tables = block_tables->as<std::int32_t>();
    p.alibi_slopes = alibi ? alibi->as<float>() : nullptr;
    p.k_head_scales = k_head_scales ? k_head_scales->as<float>() : nullptr;
    p.v_head_scales = v_head_scales ? v_head_scales->as<float>() : nullptr;
  }
};

/// Appends a failure for every buffer whose guard bytes changed (a kernel writing through a wrong
/// pointer, inputs included).
void check_guards(std::initializer_list<std::pair<const char*, const DeviceBuffer*>> buffers,
                  std::vector<std::string>& failures) {
  for (const auto& [name, buffer] : buffers)
    if (std::string g = buffer->check_guards(name); !g.empty()) failures.push_back(g);
}

}  // namespace

void throw_if_cuda_error(int error, const char* what) {
  const auto e = static_cast<cudaError_t>(error);
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

bool cuda_device_available(std::string& why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
    return false;
  }
  if (count == 0) {
    why = "cudaGetDeviceCount: no CUDA device";
    return false;
  }
  return true;
}

std::string cuda_device_name() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return "unknown CUDA device";
  std::ostringstream os;
  os << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs)";
  return os.str();
}

GpuDecodeOutputs run_decode_on_gpu(DecodeKernel kernel, const cases::DecodeCase& c,
                                   const AttentionOptions& options) {
  const cases::Case& s = c.spec;
  DecodeParams p = case_decode_params(c, options);  // host pointers, replaced below
  const std::vector<std::int32_t> lens = case_seq_lens(c.seq_lens);
  DecodePlan plan;
  if (Status st = plan_decode_launch(kernel, p, s.max_seq_len, s.partition_size, lens, plan); !st.ok())
    fail("plan: ", st.message());

  // Inputs.
  const auto query = upload(c.query.bytes(), c.query.nbytes(), kGuardBytes);
  const auto seq_lens = upload(c.seq_lens.bytes(), c.seq_lens.nbytes(), kGuardBytes);
  const DevicePagedCache cache(c.key_cache, c.value_cache, c.block_tables, options, p);
  p.query = query->data();
  p.seq_lens = seq_lens->as<std::int32_t>();

  // Outputs: NaN bytes between guards.
  GpuDecodeOutputs o;
  const std::int64_t S = p.num_seqs, H = p.num_heads, D = p.head_size, P = plan.max_num_partitions;
  o.out = Tensor(p.dtype, {S, H, D});
  const bool v2 = kernel == DecodeKernel::v2;
  if (v2) {
    o.tmp_out = Tensor(p.dtype, {S, H, P, D});
    o.max_logits = Tensor(DType::f32, {S, H, P});
    o.exp_sums = Tensor(DType::f32, {S, H, P});
  }
  struct Output {
    const char* name;
    Tensor* host;
    std::unique_ptr<DeviceBuffer> device;
  };
  std::vector<Output> outputs;
  outputs.push_back({"out", &o.out, nullptr});
  if (v2) {
    outputs.push_back({"tmp_out", &o.tmp_out, nullptr});
    outputs.push_back({"max_logits", &o.max_logits, nullptr});
    outputs.push_back({"exp_sums", &o.exp_sums, nullptr});
  }
  for (auto& out : outputs)
    out.device = std::make_unique<DeviceBuffer>(out.host->nbytes(), kNaNBytes, kGuardBytes);
  p.out = outputs[0].device->data();
  if (v2) {
    p.tmp_out = outputs[1].device->data();
    p.max_logits = outputs[2].device->as<float>();
    p.exp_sums = outputs[3].device->as<float>();
  }

  const Status st = v2 ? paged_attention_v2(p, plan) : paged_attention_v1(p, plan);
  if (!st.ok()) fail("paged_attention_", to_string(kernel), ": ", st.message());
  cuda_check(cudaDeviceSynchronize(), "running the kernels");

  for (auto& out : outputs) {
    if (out.host->nbytes()) out.device->download(out.host->bytes());
    check_guards({{out.name, out.device.get()}}, o.guard_failures);
  }
  check_guards({{"query", query.get()},
                {"key_cache", cache.key_cache.get()},
                {"value_cache", cache.value_cache.get()},
                {"block_tables", cache.block_tables.get()},
                {"seq_lens", seq_lens.get()}},
               o.guard_failures);
  return o;
}

GpuPrefixOutputs run_prefix_on_gpu(const cases::PrefixCase& c, const AttentionOptions& options) {
  const cases::Case& s = c.spec;
  PrefixParams p = case_prefix_params(c, options);  // host pointers, replaced below
  const std::vector<std::int32_t> seq_lens = case_seq_lens(c.seq_lens), query_lens = s.query_lens;
  PrefixPlan plan;
  if (Status st = plan_prefix_launch(p, seq_lens, query_lens, s.block_m, s.block_n, s.context_tile,
                                     s.max_query_len, plan);
      !st.ok())
    fail("plan: ", st.message());

  const auto query = upload(c.query.bytes(), c.query.nbytes(), kGuardBytes);
  const auto key = upload(c.key.bytes(), c.key.nbytes(), kGuardBytes);
  const auto value = upload(c.value.bytes(), c.value.nbytes(), kGuardBytes);
  const DevicePagedCache cache(c.key_cache, c.value_cache, c.block_tables, options, p);
  p.query = query->data();
  p.key = key->data();
  p.value = value->data();

  GpuPrefixOutputs o;
  o.out = Tensor(p.dtype, c.query.shape());
  const auto out = std::make_unique<DeviceBuffer>(o.out.nbytes(), kNaNBytes, kGuardBytes);
  p.out = out->data();
  if (Status st = prefix_attention(p, plan); !st.ok()) fail("prefix_attention: ", st.message());
  cuda_check(cudaDeviceSynchronize(), "running the kernels");
  if (o.out.nbytes()) out->download(o.out.bytes());
  check_guards({{"out", out.get()},
                {"query", query.get()},
                {"key", key.get()},
                {"value", value.get()},
                {"key_cache", cache.key_cache.get()},
                {"value_cache", cache.value_cache.get()},
                {"block_tables", cache.block_tables.get()}},
               o.guard_failures);
  return o;
}

}  // namespace pao::cuda::check

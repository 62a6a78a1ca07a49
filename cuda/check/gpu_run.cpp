// Device buffers with guards, and one decode or prefix case through the CUDA launchers.
#include "check/gpu_run.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

#include "check/case_params.hpp"
#include "check/device_fill.hpp"
#include "pao/core/error.hpp"
#include "pao/cuda/paged_attention_cuda.hpp"
#include "pao/cuda/prefix_attention_cuda.hpp"
#include "pao/golden/reader.hpp"

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
  /// Every element `element_size` bytes of `pattern` (FilledTensor), on the device.
  void fill(std::uint32_t pattern, int element_size) {
    cuda_check(fill_device_pattern(data(), bytes_, pattern, element_size), "fill");
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

/// A tensor the device fills (bench::FilledTensor), between guard bytes.
std::unique_ptr<DeviceBuffer> fill(const bench::FilledTensor& t) {
  auto b = std::make_unique<DeviceBuffer>(t.nbytes(), 0, kGuardBytes);
  b->fill(t.pattern, static_cast<int>(dtype_size(t.dtype)));
  return b;
}

/// The paged cache and scalars of a case on the device, pointed to by p: both caches between
/// NaN bytes (a stray read shows up as NaN), the block tables, ALiBi slopes, per-head scales and
/// an integer cache's scales and zero points between guard bytes.
struct DevicePagedCache {
  std::unique_ptr<DeviceBuffer> key_cache, value_cache, block_tables, alibi, k_head_scales, v_head_scales;
  std::unique_ptr<DeviceBuffer> quant[4];  // key scale, key zero point, value scale, value zero point

  DevicePagedCache(const Tensor& kc, const Tensor& vc, const Tensor& tables, const AttentionOptions& options,
                   PagedAttentionParams& p) {
    key_cache = std::make_unique<DeviceBuffer>(kc.nbytes(), 0, kNaNBytes);
    value_cache = std::make_unique<DeviceBuffer>(vc.nbytes(), 0, kNaNBytes);
    if (kc.nbytes()) key_cache->upload(kc.bytes());
    if (vc.nbytes()) value_cache->upload(vc.bytes());
    set_rest(kc.dtype(), tables, options, p);
  }
  /// Caches the device fills (bench::FilledTensor); everything else as above.
  DevicePagedCache(const bench::FilledTensor& kc, const bench::FilledTensor& vc, const Tensor& tables,
                   const AttentionOptions& options, PagedAttentionParams& p) {
    key_cache = std::make_unique<DeviceBuffer>(kc.nbytes(), 0, kNaNBytes);
    value_cache = std::make_unique<DeviceBuffer>(vc.nbytes(), 0, kNaNBytes);
    key_cache->fill(kc.pattern, static_cast<int>(dtype_size(kc.dtype)));
    value_cache->fill(vc.pattern, static_cast<int>(dtype_size(vc.dtype)));
    set_rest(kc.dtype, tables, options, p);
  }

 private:
  void set_rest(DType cache_dtype, const Tensor& tables, const AttentionOptions& options,
                PagedAttentionParams& p) {
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
    if (!is_integer_cache(cache_dtype)) return;
    int i = 0;
    for (const CacheTensor t : {CacheTensor::key, CacheTensor::value})
      for (const bool zp : {false, true}) {
        const TensorView& v = zp ? options.kv_quant.zero_point(t) : options.kv_quant.scale(t);
        require(v.is_contiguous(), quant_param_name(t, zp), ": the harness uploads contiguous params");
        quant[i] = upload(v.data, static_cast<std::size_t>(v.numel()) * dtype_size(v.dtype), kGuardBytes);
        QuantTensorParams& q = t == CacheTensor::key ? p.key_quant : p.value_quant;
        (zp ? q.zero_point : q.scale) = quant[i]->data();
        ++i;
      }
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

struct DeviceDecodeCase::State {
  cases::Case spec;
  std::vector<std::int32_t> lens;  // the plans' host copy of seq_lens
  KernelVariant kernel = KernelVariant::v1;
  DecodeParams p;
  DecodePlan plan;
  std::unique_ptr<DeviceBuffer> query, seq_lens;
  std::unique_ptr<DevicePagedCache> cache;
  struct Output {
    const char* name;
    Shape shape;
    DType dtype;
    std::unique_ptr<DeviceBuffer> device;
  };
  std::vector<Output> outputs;  // out, then V2's tmp_out, max_logits, exp_sums
};

DeviceDecodeCase::DeviceDecodeCase(KernelVariant kernel, const cases::DecodeCase& c,
                                   const AttentionOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.spec = c.spec;
  st.p = case_decode_params(c, options);  // host pointers, replaced below
  st.lens = case_seq_lens(c.seq_lens);
  st.query = upload(c.query.bytes(), c.query.nbytes(), kGuardBytes);
  st.seq_lens = upload(c.seq_lens.bytes(), c.seq_lens.nbytes(), kGuardBytes);
  st.cache = std::make_unique<DevicePagedCache>(c.key_cache, c.value_cache, c.block_tables, options, st.p);
  st.p.query = st.query->data();
  st.p.seq_lens = st.seq_lens->as<std::int32_t>();
  select(kernel, c.spec.partition_size);
}

DeviceDecodeCase::DeviceDecodeCase(KernelVariant kernel, const bench::FilledDecodeCase& c,
                                   const AttentionOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.spec = c.spec;
  st.p = case_decode_params(c, options);  // null tensor pointers, set below
  st.lens = case_seq_lens(c.seq_lens);
  st.query = fill(c.query);
  st.seq_lens = upload(c.seq_lens.bytes(), c.seq_lens.nbytes(), kGuardBytes);
  st.cache = std::make_unique<DevicePagedCache>(c.key_cache, c.value_cache, c.block_tables, options, st.p);
  st.p.query = st.query->data();
  st.p.seq_lens = st.seq_lens->as<std::int32_t>();
  cuda_check(cudaDeviceSynchronize(), "filling the case");
  select(kernel, c.spec.partition_size);
}

void DeviceDecodeCase::select(KernelVariant kernel, std::int32_t partition_size) {
  State& st = *state_;
  DecodeParams& p = st.p;
  DecodePlan plan;
  if (Status status = plan_decode_launch(kernel, p, st.spec.max_seq_len, partition_size, st.lens, plan);
      !status.ok())
    fail("plan: ", status.message());
  st.kernel = kernel;
  st.plan = plan;
  // Outputs: NaN bytes between guards.
  st.outputs.clear();
  const std::int64_t S = p.num_seqs, H = p.num_heads, D = p.head_size, P = st.plan.max_num_partitions;
  st.outputs.push_back({"out", {S, H, D}, p.dtype, nullptr});
  if (kernel == KernelVariant::v2) {
    st.outputs.push_back({"tmp_out", {S, H, P, D}, p.dtype, nullptr});
    st.outputs.push_back({"max_logits", {S, H, P}, DType::f32, nullptr});
    st.outputs.push_back({"exp_sums", {S, H, P}, DType::f32, nullptr});
  }
  for (auto& out : st.outputs)
    out.device = std::make_unique<DeviceBuffer>(
        static_cast<std::size_t>(shape_numel(out.shape)) * dtype_size(out.dtype), kNaNBytes, kGuardBytes);
  p.out = st.outputs[0].device->data();
  p.tmp_out = nullptr;
  p.max_logits = p.exp_sums = nullptr;
  if (kernel == KernelVariant::v2) {
    p.tmp_out = st.outputs[1].device->data();
    p.max_logits = st.outputs[2].device->as<float>();
    p.exp_sums = st.outputs[3].device->as<float>();
  }
}

DeviceDecodeCase::~DeviceDecodeCase() = default;

const DecodePlan& DeviceDecodeCase::plan() const { return state_->plan; }

Status DeviceDecodeCase::launch(cudaStream_t stream) const {
  const State& st = *state_;
  return st.kernel == KernelVariant::v2 ? paged_attention_v2(st.p, st.plan, stream)
                                        : paged_attention_v1(st.p, st.plan, stream);
}

GpuDecodeOutputs DeviceDecodeCase::outputs() const {
  const State& st = *state_;
  cuda_check(cudaDeviceSynchronize(), "running the kernels");
  GpuDecodeOutputs o;
  Tensor* host[] = {&o.out, &o.tmp_out, &o.max_logits, &o.exp_sums};
  for (std::size_t i = 0; i < st.outputs.size(); ++i) {
    const auto& out = st.outputs[i];
    *host[i] = Tensor(out.dtype, out.shape);
    if (host[i]->nbytes()) out.device->download(host[i]->bytes());
    check_guards({{out.name, out.device.get()}}, o.guard_failures);
  }
  check_guards({{"query", st.query.get()},
                {"key_cache", st.cache->key_cache.get()},
                {"value_cache", st.cache->value_cache.get()},
                {"block_tables", st.cache->block_tables.get()},
                {"seq_lens", st.seq_lens.get()}},
               o.guard_failures);
  return o;
}

struct DevicePrefixCase::State {
  PrefixParams p;
  PrefixPlan plan;
  Shape out_shape;
  std::unique_ptr<DeviceBuffer> query, key, value, out;
  std::unique_ptr<DevicePagedCache> cache;
};

namespace {

/// The plan of a prefix case's launch with its tiles.
PrefixPlan plan_prefix(const cases::Case& s, const PrefixParams& p,
                       const std::vector<std::int32_t>& seq_lens) {
  PrefixPlan plan;
  if (Status status = plan_prefix_launch(p, seq_lens, s.query_lens, s.block_m, s.block_n, s.context_tile,
                                         s.max_query_len, plan);
      !status.ok())
    fail("plan: ", status.message());
  return plan;
}

}  // namespace

DevicePrefixCase::DevicePrefixCase(const cases::PrefixCase& c, const AttentionOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.p = case_prefix_params(c, options);  // host pointers, replaced below
  PrefixParams& p = st.p;
  st.plan = plan_prefix(c.spec, p, case_seq_lens(c.seq_lens));
  st.query = upload(c.query.bytes(), c.query.nbytes(), kGuardBytes);
  st.key = upload(c.key.bytes(), c.key.nbytes(), kGuardBytes);
  st.value = upload(c.value.bytes(), c.value.nbytes(), kGuardBytes);
  st.cache = std::make_unique<DevicePagedCache>(c.key_cache, c.value_cache, c.block_tables, options, p);
  p.query = st.query->data();
  p.key = st.key->data();
  p.value = st.value->data();
  st.out_shape = c.query.shape();
  st.out = std::make_unique<DeviceBuffer>(c.query.nbytes(), kNaNBytes, kGuardBytes);
  p.out = st.out->data();
}

DevicePrefixCase::DevicePrefixCase(const bench::FilledPrefixCase& c, const AttentionOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.p = case_prefix_params(c, options);  // null tensor pointers, set below
  PrefixParams& p = st.p;
  st.plan = plan_prefix(c.spec, p, case_seq_lens(c.seq_lens));
  st.query = fill(c.query);
  st.key = fill(c.key);
  st.value = fill(c.value);
  st.cache = std::make_unique<DevicePagedCache>(c.key_cache, c.value_cache, c.block_tables, options, p);
  p.query = st.query->data();
  p.key = st.key->data();
  p.value = st.value->data();
  st.out_shape = c.query.shape;
  st.out = std::make_unique<DeviceBuffer>(c.query.nbytes(), kNaNBytes, kGuardBytes);
  p.out = st.out->data();
  cuda_check(cudaDeviceSynchronize(), "filling the case");
}

DevicePrefixCase::~DevicePrefixCase() = default;

const PrefixPlan& DevicePrefixCase::plan() const { return state_->plan; }

Status DevicePrefixCase::launch(cudaStream_t stream) const {
  return prefix_attention(state_->p, state_->plan, stream);
}

GpuPrefixOutputs DevicePrefixCase::outputs() const {
  const State& st = *state_;
  cuda_check(cudaDeviceSynchronize(), "running the kernels");
  GpuPrefixOutputs o;
  o.out = Tensor(st.p.dtype, st.out_shape);
  if (o.out.nbytes()) st.out->download(o.out.bytes());
  check_guards({{"out", st.out.get()},
                {"query", st.query.get()},
                {"key", st.key.get()},
                {"value", st.value.get()},
                {"key_cache", st.cache->key_cache.get()},
                {"value_cache", st.cache->value_cache.get()},
                {"block_tables", st.cache->block_tables.get()}},
               o.guard_failures);
  return o;
}

GpuRun run_on_gpu(KernelVariant variant, const golden::GoldenTensors& golden) {
  require(has_cuda_kernel(variant), "pao has no CUDA kernel for the ", to_string(variant), " variant");
  const std::string name = to_string(variant);  // the golden's outputs of a variant are "<variant>.*"
  GpuRun run;
  if (variant == KernelVariant::prefix) {
    const cases::PrefixCase c = golden::prefix_case_of(golden);
    const DevicePrefixCase device(c, c.args().options);
    if (Status st = device.launch(); !st.ok()) fail("prefix_attention: ", st.message());
    GpuPrefixOutputs o = device.outputs();
    run.outputs.emplace_back(name + ".out", std::move(o.out));
    run.guard_failures = std::move(o.guard_failures);
    return run;
  }
  const cases::DecodeCase c = golden::decode_case_of(golden);
  const DeviceDecodeCase device(variant, c, c.args().options);
  if (Status st = device.launch(); !st.ok()) fail("paged_attention_", name, ": ", st.message());
  GpuDecodeOutputs o = device.outputs();
  run.outputs.emplace_back(name + ".out", std::move(o.out));
  if (variant == KernelVariant::v2) {
    run.outputs.emplace_back(name + ".tmp_out", std::move(o.tmp_out));
    run.outputs.emplace_back(name + ".max_logits", std::move(o.max_logits));
    run.outputs.emplace_back(name + ".exp_sums", std::move(o.exp_sums));
  }
  run.guard_failures = std::move(o.guard_failures);
  return run;
}

}  // namespace pao::cuda::check

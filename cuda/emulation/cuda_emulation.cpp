// The fiber scheduler of the CUDA emulation (see cuda_emulation.hpp): ucontext fibers, one per
// thread of the running CTA, switched only at barriers. Under AddressSanitizer every switch is
// announced (__sanitizer_start/finish_switch_fiber), as ASan requires for stack switching.
#include "cuda_emulation.hpp"

#include <ucontext.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pao/plan/partition.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define PAO_EMULATION_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAO_EMULATION_ASAN 1
#endif
#endif
#if defined(PAO_EMULATION_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace pao::cuda::emulation {

namespace {

constexpr int kWarp = 32;
constexpr std::size_t kStackBytes = std::size_t{256} << 10;

enum class State { runnable, at_block_barrier, at_warp_barrier, finished };

struct Fiber {
  ucontext_t context{};
  std::unique_ptr<char[]> stack;
  State state = State::runnable;
  Dim3 thread_idx;
  int predicate = 0;  // __syncthreads_or: in; its result: out
  float send = 0;     // shuffles: this lane's value
  int partner = 0;    // shuffles: the lane whose value this lane receives
  float received = 0;
};

struct Cta {
  Dim3 block_idx, block_dim, grid_dim;
  std::vector<Fiber> fibers;
  std::vector<float> shared;  // dynamic shared memory
  ucontext_t scheduler{};
  int current = -1;
  const std::function<void()>* kernel = nullptr;
#if defined(PAO_EMULATION_ASAN)
  const void* scheduler_stack_bottom = nullptr;
  std::size_t scheduler_stack_size = 0;
#endif
};

Cta* g_cta = nullptr;  // the running CTA (one at a time, on the calling thread)

Cta& cta() {
  if (g_cta == nullptr) throw std::logic_error("CUDA emulation: a device function ran outside launch()");
  return *g_cta;
}
Fiber& self() { return cta().fibers[static_cast<std::size_t>(cta().current)]; }

/// Back to the scheduler; returns when this fiber is resumed. `dying`: never resumed.
void yield_to_scheduler(bool dying = false) {
  Cta& c = cta();
  Fiber& f = self();
#if defined(PAO_EMULATION_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(dying ? nullptr : &fake_stack, c.scheduler_stack_bottom,
                                 c.scheduler_stack_size);
  swapcontext(&f.context, &c.scheduler);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  (void)dying;
  swapcontext(&f.context, &c.scheduler);
#endif
}

void fiber_entry() {
#if defined(PAO_EMULATION_ASAN)
  // Learn the scheduler's stack from the switch that brought us here.
  __sanitizer_finish_switch_fiber(nullptr, &cta().scheduler_stack_bottom, &cta().scheduler_stack_size);
#endif
  (*cta().kernel)();
  self().state = State::finished;
  yield_to_scheduler(true);
}

void resume(Cta& c, int i) {
  Fiber& f = c.fibers[static_cast<std::size_t>(i)];
  c.current = i;
#if defined(PAO_EMULATION_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, f.stack.get(), kStackBytes);
  swapcontext(&c.scheduler, &f.context);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  swapcontext(&c.scheduler, &f.context);
#endif
  c.current = -1;
}

/// Gives fiber `i` a fresh context that starts the kernel. Kept out of line: getcontext() returns
/// twice, and the locals of a function that calls it may be clobbered (-Wclobbered).
[[gnu::noinline]] void prepare_fiber(Cta& c, int i) {
  Fiber& f = c.fibers[static_cast<std::size_t>(i)];
  f.state = State::runnable;
  f.thread_idx = {static_cast<unsigned>(i) % c.block_dim.x,
                  (static_cast<unsigned>(i) / c.block_dim.x) % c.block_dim.y,
                  static_cast<unsigned>(i) / (c.block_dim.x * c.block_dim.y)};
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack.get();
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, fiber_entry, 0);
}

/// Runs one CTA to completion.
void run_cta(Cta& c) {
  const int n = static_cast<int>(c.fibers.size());
  for (int i = 0; i < n; ++i) prepare_fiber(c, i);
  const int num_warps = ceil_div(n, kWarp);
  for (;;) {
    bool progressed = false;
    for (int i = 0; i < n; ++i) {
      if (c.fibers[static_cast<std::size_t>(i)].state != State::runnable) continue;
      resume(c, i);
      progressed = true;
    }
    // Warp barriers (shuffles): complete when every lane of the warp has arrived.
    for (int w = 0; w < num_warps; ++w) {
      const int lo = w * kWarp, hi = std::min(n, lo + kWarp);
      bool all = true;
      for (int i = lo; i < hi; ++i)
        all = all && c.fibers[static_cast<std::size_t>(i)].state == State::at_warp_barrier;
      if (!all) continue;
      for (int i = lo; i < hi; ++i) {
        Fiber& f = c.fibers[static_cast<std::size_t>(i)];
        const int src = lo + (f.partner & (kWarp - 1));
        f.received = src < hi ? c.fibers[static_cast<std::size_t>(src)].send : f.send;
      }
      for (int i = lo; i < hi; ++i) c.fibers[static_cast<std::size_t>(i)].state = State::runnable;
      progressed = true;
    }
    // The CTA barrier: completes when every thread that has not exited has arrived.
    int waiting = 0, finished = 0, any = 0;
    for (const Fiber& f : c.fibers) {
      waiting += f.state == State::at_block_barrier;
      finished += f.state == State::finished;
      any |= f.state == State::at_block_barrier ? f.predicate : 0;
    }
    if (finished == n) return;
    if (waiting > 0 && waiting + finished == n) {
      for (Fiber& f : c.fibers)
        if (f.state == State::at_block_barrier) {
          f.predicate = any != 0;
          f.state = State::runnable;
        }
      progressed = true;
    }
    if (!progressed)
      throw std::runtime_error("CUDA emulation: deadlock in CTA (" + std::to_string(c.block_idx.x) + ", " +
                               std::to_string(c.block_idx.y) + ", " + std::to_string(c.block_idx.z) +
                               "): threads wait at barriers that cannot complete");
  }
}

}  // namespace

const Dim3& thread_idx() { return self().thread_idx; }
const Dim3& block_idx() { return cta().block_idx; }
const Dim3& block_dim() { return cta().block_dim; }
const Dim3& grid_dim() { return cta().grid_dim; }
float* dynamic_shared() { return cta().shared.data(); }

void sync_threads() { (void)sync_threads_or(0); }

int sync_threads_or(int predicate) {
  Fiber& f = self();
  f.predicate = predicate;
  f.state = State::at_block_barrier;
  yield_to_scheduler();
  return self().predicate;
}

float shfl_xor(float value, int lane_mask) {
  Fiber& f = self();
  const int lane = cta().current % kWarp;
  f.send = value;
  f.partner = lane ^ lane_mask;
  f.state = State::at_warp_barrier;
  yield_to_scheduler();
  return self().received;
}

float shfl(float value, int src_lane) {
  Fiber& f = self();
  f.send = value;
  f.partner = src_lane;
  f.state = State::at_warp_barrier;
  yield_to_scheduler();
  return self().received;
}

void launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes, const std::function<void()>& kernel) {
  if (g_cta != nullptr) throw std::logic_error("CUDA emulation: launch() inside a kernel");
  Cta c;
  c.grid_dim = grid;
  c.block_dim = block;
  c.kernel = &kernel;
  const std::size_t threads = std::size_t{block.x} * block.y * block.z;
  c.fibers.resize(threads);
  for (Fiber& f : c.fibers) f.stack = std::make_unique<char[]>(kStackBytes);
  struct Reset {
    ~Reset() { g_cta = nullptr; }
  } reset;
  g_cta = &c;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        c.block_idx = {x, y, z};
        // Fresh NaN-filled shared memory per CTA: a read before a write shows up.
        c.shared.assign(ceil_div(dynamic_shared_bytes, sizeof(float)),
                        std::numeric_limits<float>::quiet_NaN());
        run_cta(c);
      }
}

}  // namespace pao::cuda::emulation

// Items computed in parallel and used in order: pao-cuda-check computes the oracle side of its
// cases (the goldens, on the CPU) on every core, a window of cases at a time, while the GPU side
// and the printing stay serial and in case order — so the output does not depend on the thread
// count. Each thread computes whole items; nothing is reduced across threads.
#pragma once

#include <omp.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <vector>

namespace pao::cuda::check {

/// Computes produce(i) for i in [0, n), `window` items at a time in parallel (OpenMP, dynamic
/// schedule), and hands each result to consume(i, result&&) on the calling thread in order i = 0,
/// 1, ... keep_going() is asked before each window; consume returning false stops. An exception
/// from produce(i) is rethrown on the calling thread when item i's turn comes. Returns the number
/// of items consumed.
template <typename T, typename Produce, typename Consume, typename KeepGoing>
std::size_t for_each_in_order(std::size_t n, std::size_t window, Produce&& produce, Consume&& consume,
                              KeepGoing&& keep_going) {
  if (window == 0) window = 1;
  std::size_t consumed = 0;
  for (std::size_t first = 0; first < n; first += window) {
    if (!keep_going()) return consumed;
    const std::size_t count = first + window < n ? window : n - first;
    std::vector<std::optional<T>> results(count);
    std::vector<std::exception_ptr> errors(count);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(count); ++k) {
      const auto j = static_cast<std::size_t>(k);
      try {
        results[j].emplace(produce(first + j));
      } catch (...) {
        errors[j] = std::current_exception();
      }
    }
    for (std::size_t j = 0; j < count; ++j) {
      if (errors[j]) std::rethrow_exception(errors[j]);
      ++consumed;
      if (!consume(first + j, std::move(*results[j]))) return consumed;
      results[j].reset();  // free the item's memory as soon as it is used
    }
  }
  return consumed;
}

/// The window pao-cuda-check uses: two items per OpenMP thread, so that a long item does not
/// leave the other threads idle for the rest of the window.
inline std::size_t default_window() { return 2 * static_cast<std::size_t>(omp_get_max_threads()); }

}  // namespace pao::cuda::check

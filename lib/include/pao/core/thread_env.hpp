// The thread-count variables of the environment, checked when a tool starts: OpenMP's runtime
// takes OMP_NUM_THREADS=100000000 as it is and dies in the first parallel region (libgomp:
// "Thread creation failed", exit 1, no word from the tool), and ignores "abc" with a note of its
// own; every pao tool refuses such a value up front instead, exit 2, naming the variable.
#pragma once

#include <functional>
#include <string>

namespace pao {

/// The most threads a thread-count variable may ask for.
inline constexpr long kMaxThreadsFromEnvironment = 4096;

/// "" when the thread-count variables of `getenv` (std::getenv, or a test's table) are unset,
/// empty, or hold what OpenMP defines and pao can run: OMP_NUM_THREADS a positive integer up to
/// kMaxThreadsFromEnvironment, or a comma-separated list of them (one per nesting level);
/// OMP_THREAD_LIMIT one such integer. Otherwise the reason, naming the variable and its value
/// (an excerpt of it).
std::string thread_environment_problem(const std::function<const char*(const char*)>& getenv);

/// Throws pao::Error with thread_environment_problem(std::getenv) when it is not "".
void require_thread_environment();

}  // namespace pao

// Thread-count variables of the environment (pao/core/thread_env.hpp).
#include "pao/core/thread_env.hpp"

#include <cstdlib>
#include <string_view>

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"

namespace pao {

namespace {

/// Whether `text` is a positive integer up to kMaxThreadsFromEnvironment (spaces around allowed,
/// as OpenMP allows them).
bool thread_count(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty() || text.size() > 6) return false;
  long n = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    n = n * 10 + (ch - '0');
  }
  return n >= 1 && n <= kMaxThreadsFromEnvironment;
}

}  // namespace

std::string thread_environment_problem(const std::function<const char*(const char*)>& getenv) {
  std::string rule = "a positive integer up to ";
  rule += std::to_string(kMaxThreadsFromEnvironment);
  for (const char* name : {"OMP_NUM_THREADS", "OMP_THREAD_LIMIT"}) {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string_view text(value);
    bool ok = true;
    if (std::string_view(name) == "OMP_NUM_THREADS") {
      // A list gives the threads of each nesting level: every entry must be a count.
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = text.find(',', start);
        ok = ok && thread_count(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    } else {
      ok = thread_count(text);
    }
    if (ok) continue;
    std::string why = name;
    why += "='";
    why += excerpt(text);
    why += "': must be ";
    why += rule;
    if (std::string_view(name) == "OMP_NUM_THREADS") why += " (or a comma-separated list of them)";
    why += "; unset it to use every core";
    return why;
  }
  return "";
}

void require_thread_environment() {
  if (std::string why = thread_environment_problem([](const char* name) { return std::getenv(name); });
      !why.empty())
    throw Error(why);
}

}  // namespace pao

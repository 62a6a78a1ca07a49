// pao/core/memory.hpp: the machine's memory, read from Linux (/proc/meminfo, the cgroup files).
#include "pao/core/memory.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#if defined(__linux__)
#include <sys/resource.h>
#endif

#include "pao/core/error.hpp"

namespace pao {

namespace {

/// The first number of a file ("max" and unreadable files: nullopt).
std::optional<std::uint64_t> read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  std::uint64_t v = 0;
  const auto res = std::from_chars(word.data(), word.data() + word.size(), v);
  if (res.ec != std::errc() || res.ptr != word.data() + word.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

/// The room left under this process's cgroup limit (the whole-system files; a container sees its own).
std::optional<std::uint64_t> cgroup_room() {
  const auto room = [](std::optional<std::uint64_t> limit,
                       std::optional<std::uint64_t> used) -> std::optional<std::uint64_t> {
    if (!limit || *limit >= (std::uint64_t{1} << 60)) return std::nullopt;  // v1 writes "no limit" as 2^63
    const std::uint64_t u = used.value_or(0);
    return *limit > u ? *limit - u : 0;
  };
  if (auto r = room(read_number("/sys/fs/cgroup/memory.max"), read_number("/sys/fs/cgroup/memory.current")))
    return r;
  return room(read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
              read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
}

/// The address space left under RLIMIT_AS (`ulimit -v`): the limit less this process's VmSize.
/// A limit the process cannot grow past, however much the machine has free.
std::optional<std::uint64_t> address_space_room() {
#if defined(__linux__)
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::ifstream in("/proc/self/status");
  std::uint64_t used = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmSize:", 0) == 0) used = std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;
  const auto cap = static_cast<std::uint64_t>(limit.rlim_cur);
  return cap > used ? cap - used : 0;
#else
  return std::nullopt;
#endif
}

std::mutex g_mutex;
std::optional<std::uint64_t> g_limit;  // set_memory_limit's
std::string g_limit_source;

}  // namespace

std::string format_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  } else if (bytes >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  } else if (bytes >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  }
  return buf;
}

std::uint64_t parse_byte_size(std::string_view text, std::string_view what) {
  const std::string s(text);
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  std::string suffix(end);
  for (auto& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double scale = 0;
  if (suffix.empty() || suffix == "B") scale = 1;
  const char* units = "KMGT";
  for (int i = 0; i < 4; ++i) {
    const std::string u(1, units[i]);
    double decimal = 1, binary = 1;
    for (int k = 0; k <= i; ++k) decimal *= 1e3, binary *= 1024;
    if (suffix == u || suffix == u + "B") scale = decimal;
    if (suffix == u + "IB") scale = binary;
  }
  require(end != s.c_str() && scale > 0 && number >= 0 && number * scale < 1.8e19, what, " = '", text,
          "': expected a size such as 64G, 512M, 1.5T, 4096 (bytes) or 0 (no limit)");
  return static_cast<std::uint64_t>(number * scale);
}

std::optional<std::uint64_t> available_memory_bytes() {
  std::optional<std::uint64_t> least;
  for (const auto& bound : {mem_available(), cgroup_room(), address_space_room()})
    if (bound) least = least ? std::min(*least, *bound) : *bound;
  return least;
}

void set_memory_limit(std::string_view text) {
  std::lock_guard lock(g_mutex);
  if (text.empty()) {
    g_limit.reset();
    return;
  }
  g_limit = parse_byte_size(text, "--memory-limit");
  g_limit_source = "--memory-limit";
}

std::uint64_t memory_limit(std::string* source) {
  {
    std::lock_guard lock(g_mutex);
    if (g_limit) {
      if (source) *source = g_limit_source;
      return *g_limit;
    }
  }
  if (const char* env = std::getenv("PAO_MEMORY_LIMIT"); env && *env) {
    if (source) *source = "PAO_MEMORY_LIMIT";
    return parse_byte_size(env, "PAO_MEMORY_LIMIT");
  }
  if (source) *source = "available on this machine";
  return available_memory_bytes().value_or(0);
}

void require_memory(std::string_view what, double bytes, std::string_view shrink) {
  std::string source;
  const std::uint64_t limit = memory_limit(&source);
  if (limit == 0 || bytes <= static_cast<double>(limit)) return;
  fail(what, " needs about ", format_bytes(bytes), " of memory, above the ",
       format_bytes(static_cast<double>(limit)), " ",
       source == "available on this machine"
           ? "available on this machine (MemAvailable, the cgroup's limit or ulimit -v)"
           : "that " + source + " allows",
       ": ", shrink,
       "; or, if the estimate is too cautious, raise the limit: --memory-limit SIZE (pao golden, pao sim "
       "run) or PAO_MEMORY_LIMIT=SIZE (any command); 0 = no check");
}

}  // namespace pao

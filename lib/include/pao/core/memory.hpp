// How much memory a command may use, and the check that refuses a job too big for the machine
// before it allocates (`pao golden` on a case of 8 million tokens, `pao sim run --seq-len 2e9`):
// a clear error naming what needs the memory, instead of std::bad_alloc — or the machine swapping
// itself to a halt first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pao {

/// "826.6 MB", "1.42 GB", "530 B": decimal units, as every pao message prints sizes.
std::string format_bytes(double bytes);

/// "64G", "512M", "1.5T", "4096" (bytes), "0" (no limit) -> bytes; decimal or binary suffixes
/// (K/M/G/T, KiB/MiB/GiB/TiB, either case, an optional B). Throws pao::Error naming `what`.
std::uint64_t parse_byte_size(std::string_view text, std::string_view what);

/// What this process may still allocate: /proc/meminfo's MemAvailable, lowered to the room left
/// under a cgroup limit (v2 memory.max - memory.current, v1 memory.limit_in_bytes - usage) and
/// under the address-space limit (`ulimit -v`: RLIMIT_AS - VmSize).
/// nullopt where neither is known (not Linux).
std::optional<std::uint64_t> available_memory_bytes();

/// The limit the memory checks use: set_memory_limit's, else $PAO_MEMORY_LIMIT, else
/// available_memory_bytes(). 0 = no check. `source` (if given) says which of the three it is.
std::uint64_t memory_limit(std::string* source = nullptr);
/// For a command's --memory-limit option: a size for parse_byte_size, "0" for none; "" = the default.
void set_memory_limit(std::string_view text);

/// Throws pao::Error when `bytes` is above memory_limit(): "<what> needs about 38.2 GB of memory,
/// above the 21.3 GB available on this machine (...): <shrink>; or, if the estimate is too cautious,
/// raise the limit: --memory-limit SIZE ... or PAO_MEMORY_LIMIT=SIZE". Quiet when under it or when
/// no limit is known.
void require_memory(std::string_view what, double bytes, std::string_view shrink);

}  // namespace pao

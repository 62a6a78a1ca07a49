// Atomic file writes: the bytes go to a temporary file in the target's directory, which is
// fsync'ed and renamed over the target. Readers see the old file or the complete new one, never
// a partial one; an exception while producing the bytes leaves neither a temporary nor a target
// (a killed process can leave a ".<name>.pao-tmp.*" file behind, but never a partial target).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "pao/io/byte_sink.hpp"

namespace pao {

/// What was written: its size and the SHA-256 of its bytes (computed while writing).
struct WrittenFile {
  std::uint64_t size = 0;
  std::string sha256;  // lower-case hex
};

/// Calls `produce` with a sink that writes to a temporary file next to `path`, then publishes it
/// as `path` (replacing an existing file). If `produce` throws, or any I/O step fails, the
/// temporary file is removed, `path` is left as it was, and the exception propagates (I/O
/// failures as pao::Error naming the path and the system error).
WrittenFile write_file_atomically(const std::filesystem::path& path,
                                  const std::function<void(ByteSink&)>& produce);

WrittenFile write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents);

/// On SIGINT, SIGTERM or SIGHUP, removes every temporary file being written and every
/// TemporaryFolder of this process (pao audit's scratch, pao mutate's staging folder, a golden's
/// npy folder being written) with what it holds, writes `note` (if not empty; e.g. "pao golden: interrupted;
/// rerun the same command to resume") to stderr, then exits with interrupted_exit_status(signal). Every tool
/// installs it at start-up (tools/common/tool_start.hpp); a command may install it again with its own note.
void install_temporary_cleanup(std::string_view note = {});

/// A folder of this process's temporaries: a new folder ".<name>.pao-tmp-<pid>-<n>" inside `parent`
/// (created, with `parent`, if need be; never one that existed), removed with its contents on
/// destruction, by install_temporary_cleanup's handler on a signal, or, after a kill, by the next
/// remove_stale_temporaries(parent). Nothing else in `parent` is touched. A folder built to be
/// published (renamed into place, or its files moved out) is released once it is: from then on
/// neither the destructor nor a signal removes it.
class TemporaryFolder {
 public:
  TemporaryFolder(const std::filesystem::path& parent, std::string_view name);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Call after publishing the folder: it is no longer this object's to remove.
  void release();

 private:
  std::filesystem::path path_;
  int slot_ = -1;
  bool released_ = false;
};

/// The exit status of a run stopped by `signal`: 130 for SIGINT (Ctrl-C) and SIGTERM (a
/// scheduler's stop) alike, 128 + the signal for any other.
int interrupted_exit_status(int signal);

/// Removes the temporaries in `dir` (files and folders named ".<name>.pao-tmp.*", ".pao-tmp-*",
/// ".pao-old-*") whose writing process no longer runs: what a killed run left behind. Returns how
/// many it removed.
std::size_t remove_stale_temporaries(const std::filesystem::path& dir);

/// The same, only for the temporaries whose name starts with `prefix` (".pao-audit.pao-tmp-": what
/// pao audit leaves in a shared folder such as $TMPDIR, where other tools' temporaries are not its
/// business).
std::size_t remove_stale_temporaries(const std::filesystem::path& dir, std::string_view prefix);

}  // namespace pao

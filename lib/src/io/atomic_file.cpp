// Atomic file writes: temporary file in the same directory, fsync, rename, fsync the directory.
#include "pao/io/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pao/core/errno_text.hpp"
#include "pao/core/error.hpp"
#include "pao/io/sha256.hpp"

namespace pao {
namespace {

std::atomic<unsigned> g_temp_counter{0};

// The temporaries in flight, for the signal handler of install_temporary_cleanup: fixed slots, so
// that the handler only reads memory and makes system calls (async-signal-safe). 0 free, 1 being
// filled, 2 holds a file's path, 3 a folder's (a temporary folder: removed with its contents).
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
constexpr int kFile = 2, kFolder = 3;
std::atomic<int> g_slot_state[kSlots];
char g_slot_path[kSlots][kPathMax];

int register_temporary(const std::filesystem::path& path, int kind = kFile) {
  const std::string& p = path.native();
  if (p.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slot_path[i], p.c_str(), p.size() + 1);
    g_slot_state[i].store(kind);
    return i;
  }
  return -1;  // more than kSlots at once: a rerun's stale-temporary sweep still removes it
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_slot_state[slot].store(0);
}

// Removing a folder's contents from a signal handler: no opendir/readdir (they allocate), only
// open, getdents64, unlinkat, close, fixed buffers per level. Symbolic links are removed, never
// followed (O_NOFOLLOW). Nested folders to kMaxDepth levels (pao's temporary folders have none).
constexpr int kMaxDepth = 4;
alignas(8) char g_dirents[kMaxDepth][4096];

struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

void remove_folder_contents(int dir_fd, int depth) {
  // Unlinking while reading may skip entries: read again from the start until a pass removes nothing.
  for (int pass = 0; pass < 64; ++pass) {
    bool removed = false;
    ::lseek(dir_fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dir_fd, g_dirents[depth], sizeof g_dirents[depth]);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* e = reinterpret_cast<const LinuxDirent64*>(g_dirents[depth] + off);
        off += e->d_reclen;
        const char* name = e->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (::unlinkat(dir_fd, name, 0) == 0) {
          removed = true;
        } else if (depth + 1 < kMaxDepth) {
          const int sub = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0) continue;
          remove_folder_contents(sub, depth + 1);
          ::close(sub);
          if (::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0) removed = true;
        }
      }
    }
    if (!removed) return;
  }
}

void remove_folder_in_handler(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  remove_folder_contents(fd, 0);
  ::close(fd);
  ::rmdir(path);
}

// The line the signal handler writes (install_temporary_cleanup), fixed storage like the paths.
char g_interrupted_note[512];
std::size_t g_interrupted_note_size = 0;

extern "C" void remove_temporaries_and_exit(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == kFile) ::unlink(g_slot_path[i]);
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == kFolder) remove_folder_in_handler(g_slot_path[i]);
  if (g_interrupted_note_size > 0) {
    const ssize_t ignored = ::write(STDERR_FILENO, g_interrupted_note, g_interrupted_note_size);
    (void)ignored;
  }
  ::_exit(interrupted_exit_status(sig));
}

/// Fails with "<target>: <what>: <errno text>" unless `result` is 0. errno is read here, after the
/// call returned: read in the same argument list as the call, it could be read before the call
/// ran (the order of evaluation of arguments is unspecified), giving "Success".
void require_syscall(int result, const std::filesystem::path& target, const char* what) {
  const int err = errno;
  if (result != 0) fail(target.string(), ": ", what, ": ", errno_text(err));
}

/// The temporary file: removed on destruction unless committed.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) : target_(target) {
    require(target.has_filename(), target.string(), ": not a file path");
    const std::filesystem::path dir =
        target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    // O_EXCL with a pid + counter name: concurrent writers (threads or processes) never share a
    // temporary. 0666 lets the umask decide the final permissions, as for any new file.
    for (int attempt = 0; fd_ < 0; ++attempt) {
      std::string name = ".";
      name += target.filename().string();
      name += ".pao-tmp.";
      name += std::to_string(::getpid());
      name += '.';
      name += std::to_string(g_temp_counter.fetch_add(1));
      path_ = dir / name;
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      const int err = errno;
      if (fd_ >= 0) slot_ = register_temporary(path_);
      if (fd_ < 0 && (err != EEXIST || attempt > 100))
        fail(target.string(), ": cannot create a temporary file in ", dir.string(), ": ", errno_text(err));
    }
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
    unregister_temporary(slot_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_all(const std::byte* p, std::size_t n) {
    while (n > 0) {
      const ssize_t put = ::write(fd_, p, n);
      const int err = errno;
      if (put < 0 && err == EINTR) continue;
      require(put > 0, target_.string(), ": write failed: ", put == 0 ? "no space left" : errno_text(err));
      p += put;
      n -= static_cast<std::size_t>(put);
    }
  }

  void commit() {
    require_syscall(::fsync(fd_), target_, "fsync failed");
    const int fd = fd_;
    fd_ = -1;
    require_syscall(::close(fd), target_, "close failed");
    require_syscall(::rename(path_.c_str(), target_.c_str()), target_,
                    "cannot rename the temporary file into place");
    committed_ = true;
    // Make the rename itself durable. Some filesystems refuse fsync on a directory; the file is
    // complete either way, so that is not an error.
    const std::filesystem::path dir = path_.parent_path();
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      (void)::fsync(dir_fd);
      ::close(dir_fd);
    }
  }

 private:
  std::filesystem::path target_;
  std::filesystem::path path_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

/// Buffers writes into large chunks and hashes them on the way.
class TempFileSink final : public ByteSink {
 public:
  using ByteSink::write;
  explicit TempFileSink(TempFile& file) : file_(file) { buffer_.reserve(kChunk); }

  void write(std::span<const std::byte> bytes) override {
    hash_.update(bytes);
    size_ += bytes.size();
    if (buffer_.size() + bytes.size() > kChunk) flush();
    if (bytes.size() >= kChunk) {
      file_.write_all(bytes.data(), bytes.size());
    } else {
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    }
  }

  WrittenFile finish() {
    flush();
    return {size_, to_hex(hash_.digest())};
  }

 private:
  static constexpr std::size_t kChunk = std::size_t(1) << 20;

  void flush() {
    file_.write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  TempFile& file_;
  std::vector<std::byte> buffer_;
  Sha256 hash_;
  std::uint64_t size_ = 0;
};

}  // namespace

int interrupted_exit_status(int sig) {
  // One policy for the two ways a run is stopped on purpose (Ctrl-C, a scheduler's SIGTERM): 130, as
  // after Ctrl-C, so that scripts and the docs need one number; others (SIGHUP) 128 + the signal.
  return sig == SIGINT || sig == SIGTERM ? 130 : 128 + sig;
}

WrittenFile write_file_atomically(const std::filesystem::path& path,
                                  const std::function<void(ByteSink&)>& produce) {
  TempFile file(path);
  TempFileSink sink(file);
  produce(sink);
  WrittenFile written = sink.finish();
  file.commit();
  return written;
}

WrittenFile write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> contents) {
  return write_file_atomically(path, [&](ByteSink& sink) { sink.write(contents); });
}

void install_temporary_cleanup(std::string_view note) {
  std::size_t n = std::min(note.size(), sizeof g_interrupted_note - 2);
  if (n > 0) std::memcpy(g_interrupted_note, note.data(), n);  // an empty view's data() may be null
  if (n > 0 && g_interrupted_note[n - 1] != '\n') g_interrupted_note[n++] = '\n';
  g_interrupted_note_size = n;
  // sigaction, not signal: the three signals are blocked while the handler runs, so that a second
  // one (Ctrl-C, then a scheduler's SIGTERM) cannot start the cleanup over inside the first.
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_exit;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &action, nullptr);
}

TemporaryFolder::TemporaryFolder(const std::filesystem::path& parent, std::string_view name) {
  std::filesystem::create_directories(parent);
  // Created with mkdir, which fails on a name that exists: the folder is always a new one, so that
  // removing it removes nothing this process did not write.
  for (int attempt = 0;; ++attempt) {
    std::string leaf = ".";
    leaf += name;
    leaf += ".pao-tmp-";
    leaf += std::to_string(::getpid());
    leaf += '-';
    leaf += std::to_string(g_temp_counter.fetch_add(1));
    path_ = parent / leaf;
    if (::mkdir(path_.c_str(), 0777) == 0) break;
    const int err = errno;
    if (err != EEXIST || attempt > 100)
      fail(parent.string(), ": cannot create a temporary folder: ", errno_text(err));
  }
  slot_ = register_temporary(path_, kFolder);
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ec;
  if (!released_) std::filesystem::remove_all(path_, ec);
  unregister_temporary(slot_);
}

void TemporaryFolder::release() {
  released_ = true;
  unregister_temporary(slot_);
  slot_ = -1;
}

std::size_t remove_stale_temporaries(const std::filesystem::path& dir) {
  return remove_stale_temporaries(dir, ".");
}

std::size_t remove_stale_temporaries(const std::filesystem::path& dir, std::string_view prefix) {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] != '.' || name.rfind(prefix, 0) != 0) continue;
    // ".<file>.pao-tmp.<pid>.<n>" (this file), ".<name>.pao-tmp-<pid>-<n>", ".<name>.pao-old-<pid>-<n>"
    std::size_t at = std::string::npos;
    for (const char* marker : {".pao-tmp.", ".pao-tmp-", ".pao-old-"}) {
      const auto m = name.rfind(marker);
      if (m != std::string::npos) at = m + std::strlen(marker);
    }
    if (at == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + at, nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;  // alive
    std::filesystem::remove_all(entry.path(), ec);
    if (!ec) ++removed;
  }
  return removed;
}

}  // namespace pao

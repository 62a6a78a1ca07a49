// Atomic file writes: temporary file in the same directory, fsync, rename, fsync the directory.
#include "pao/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/sha256.hpp"

namespace pao {
namespace {

std::atomic<unsigned> g_temp_counter{0};

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
      if (fd_ < 0 && (errno != EEXIST || attempt > 100))
        fail(target.string(), ": cannot create a temporary file in ", dir.string(), ": ",
             std::strerror(errno));
    }
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_all(const std::byte* p, std::size_t n) {
    while (n > 0) {
      const ssize_t put = ::write(fd_, p, n);
      if (put < 0 && errno == EINTR) continue;
      require(put > 0, target_.string(), ": write failed: ", std::strerror(errno));
      p += put;
      n -= static_cast<std::size_t>(put);
    }
  }

  void commit() {
    require(::fsync(fd_) == 0, target_.string(), ": fsync failed: ", std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    require(::close(fd) == 0, target_.string(), ": close failed: ", std::strerror(errno));
    require(::rename(path_.c_str(), target_.c_str()) == 0, target_.string(),
            ": cannot rename the temporary file into place: ", std::strerror(errno));
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

}  // namespace pao

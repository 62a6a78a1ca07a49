// Byte sources for the file readers: a caller's buffer, or a file read with pread.
#include "pao/io/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pao/core/errno_text.hpp"
#include "pao/core/error.hpp"

namespace pao {

void MemorySource::read(std::uint64_t offset, void* dst, std::size_t n) const {
  require(offset <= bytes_.size() && n <= bytes_.size() - offset, name_, ": truncated: bytes [", offset, ", ",
          offset + n, ") are beyond the end (", bytes_.size(), " bytes)");
  if (n > 0) std::memcpy(dst, bytes_.data() + offset, n);
}

FileSource::FileSource(const std::filesystem::path& path) : name_(path.string()) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int err = errno;
  require(fd_ >= 0, name_, ": cannot open for reading: ", errno_text(err));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(name_, ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSource::read(std::uint64_t offset, void* dst, std::size_t n) const {
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    const int err = errno;
    if (got < 0 && err == EINTR) continue;
    require(got >= 0, name_, ": read error at byte ", offset, ": ", errno_text(err));
    require(got > 0, name_, ": truncated: the file ends at byte ", offset,
            " (was it changed while being read?)");
    out += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::size_t>(got);
  }
}

}  // namespace pao

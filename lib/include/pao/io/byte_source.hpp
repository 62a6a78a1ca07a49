// ByteSource: random-access input for the file readers, from memory or from a file, so that one
// parser serves read_*_from_memory (tests, fuzzing) and read_* (files of any size: tensors are
// read straight into their buffers, after every size was checked against the source's size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace pao {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// The name errors are prefixed with (the path, or the caller's name for a buffer).
  virtual const std::string& name() const = 0;
  virtual std::uint64_t size() const = 0;
  /// Copies bytes [offset, offset + n); throws pao::Error if they are not all there.
  virtual void read(std::uint64_t offset, void* dst, std::size_t n) const = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::span<const std::byte> bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return bytes_.size(); }
  void read(std::uint64_t offset, void* dst, std::size_t n) const override;

 private:
  std::span<const std::byte> bytes_;
  std::string name_;
};

/// A regular file, opened for reading. Throws pao::Error naming the path if it cannot be opened
/// or is not a regular file.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, void* dst, std::size_t n) const override;

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string name_;
};

}  // namespace pao

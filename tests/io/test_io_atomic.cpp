// Tests of pao/io/atomic_file.hpp: complete files appear, and an exception or an I/O failure
// leaves neither a temporary file nor a partial (or damaged) target.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/sha256.hpp"

namespace fs = std::filesystem;

namespace {

/// A fresh, empty directory, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("pao_test_atomic_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::vector<fs::path> files() const { return {fs::directory_iterator(path_), fs::directory_iterator()}; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace

TEST_CASE("atomic file: writes the contents and reports size and sha256") {
  TempDir dir;
  const auto target = dir.path() / "out.bin";
  const std::string contents = "golden bytes";
  const auto written = pao::write_file_atomically(target, as_bytes(contents));
  CHECK(slurp(target) == contents);
  CHECK(written.size == contents.size());
  CHECK(written.sha256 == pao::sha256_hex(contents));
  CHECK(dir.files().size() == 1);  // no temporary left

  // Replacing an existing file.
  pao::write_file_atomically(target, as_bytes(std::string("new")));
  CHECK(slurp(target) == "new");
  CHECK(dir.files().size() == 1);
}

TEST_CASE("atomic file: streamed writes larger than the buffer") {
  TempDir dir;
  const auto target = dir.path() / "big.bin";
  std::string expected;
  pao::Sha256 hash;
  const auto written = pao::write_file_atomically(target, [&](pao::ByteSink& sink) {
    for (int i = 0; i < 40; ++i) {
      const std::string piece(std::size_t(70000 + 1000 * i), static_cast<char>('a' + i % 26));
      sink.write(piece);
      expected += piece;
    }
    sink.write(std::string(3u << 20, 'z'));  // one write over the chunk size
    expected += std::string(3u << 20, 'z');
  });
  CHECK(written.size == expected.size());
  CHECK(written.sha256 == pao::sha256_hex(expected));
  CHECK(slurp(target) == expected);
}

TEST_CASE("atomic file: an exception mid-write leaves nothing behind") {
  TempDir dir;
  const auto target = dir.path() / "case.safetensors";
  auto failing = [](pao::ByteSink& sink) {
    sink.write(std::string(5000, 'x'));
    throw std::runtime_error("generator failed");
  };
  CHECK_THROWS_WITH_AS(pao::write_file_atomically(target, failing), "generator failed", std::runtime_error);
  CHECK_FALSE(fs::exists(target));
  CHECK(dir.files().empty());

  // With an existing target: it keeps its old contents.
  pao::write_file_atomically(target, as_bytes(std::string("old golden")));
  CHECK_THROWS_AS(pao::write_file_atomically(target, failing), std::runtime_error);
  CHECK(slurp(target) == "old golden");
  CHECK(dir.files().size() == 1);
}

TEST_CASE("atomic file: I/O failures are pao::Error naming the path, and leave nothing") {
  TempDir dir;
  const auto missing_dir = dir.path() / "no_such_dir" / "x.bin";
  try {
    pao::write_file_atomically(missing_dir, as_bytes(std::string("x")));
    FAIL("expected an error");
  } catch (const pao::Error& e) {
    CHECK(std::string(e.what()).find(missing_dir.string()) != std::string::npos);
  }

  // The target is a directory: the rename fails and the temporary is removed.
  const auto is_dir = dir.path() / "sub";
  fs::create_directories(is_dir / "inner");
  CHECK_THROWS_AS(pao::write_file_atomically(is_dir, as_bytes(std::string("x"))), pao::Error);
  CHECK(dir.files().size() == 1);
  CHECK(fs::is_directory(is_dir));
}

TEST_CASE("atomic file: a failed step says what the system said, read after the call (not 'Success')") {
  TempDir dir;
  const auto is_dir = dir.path() / "sub";
  fs::create_directories(is_dir / "inner");  // not empty: rename(2) over it fails (EISDIR / ENOTEMPTY)
  try {
    pao::write_file_atomically(is_dir, as_bytes(std::string("x")));
    FAIL("expected an error");
  } catch (const pao::Error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("cannot rename the temporary file into place: ") != std::string::npos);
    CHECK(what.find("Success") == std::string::npos);
    CHECK(what.find("Is a directory") != std::string::npos);
  }
}

TEST_CASE("atomic file: one exit status for a run stopped on purpose: 130 for SIGINT and SIGTERM") {
  CHECK(pao::interrupted_exit_status(SIGINT) == 130);
  CHECK(pao::interrupted_exit_status(SIGTERM) == 130);
  CHECK(pao::interrupted_exit_status(SIGHUP) == 128 + SIGHUP);
}

namespace {

/// Runs `body` in a child process and returns its exit status (-1 when it did not exit).
template <typename Body>
int exit_status_of_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("atomic file: a temporary folder is a new one, removed with its contents and nothing else") {
  TempDir dir;
  { std::ofstream(dir.path() / "mine.safetensors") << "the user's"; }
  fs::path made;
  {
    const pao::TemporaryFolder a(dir.path(), "pao-audit"), b(dir.path(), "pao-audit");
    made = a.path();
    CHECK(a.path() != b.path());  // never one that exists
    CHECK(a.path().parent_path() == dir.path());
    CHECK(a.path().filename().string().rfind(".pao-audit.pao-tmp-" + std::to_string(::getpid()) + "-", 0) ==
          0);
    { std::ofstream(a.path() / "mine.safetensors") << "audit's"; }
  }
  CHECK_FALSE(fs::exists(made));
  CHECK(slurp(dir.path() / "mine.safetensors") == "the user's");
  CHECK(dir.files().size() == 1);
  // A parent that is not there is created.
  {
    const pao::TemporaryFolder c(dir.path() / "new" / "deeper", "x");
    CHECK(fs::is_directory(c.path()));
  }
}

TEST_CASE("atomic file: SIGTERM and SIGINT remove the temporary folders (with contents) and exit 130") {
  TempDir dir;
  { std::ofstream(dir.path() / "kept.txt") << "kept"; }
  for (const int sig : {SIGTERM, SIGINT}) {
    const int status = exit_status_of_child([&] {
      pao::install_temporary_cleanup();
      pao::TemporaryFolder folder(dir.path(), "pao-audit");
      std::ofstream(folder.path() / "a.safetensors") << "a";
      fs::create_directories(folder.path() / "sub");
      std::ofstream(folder.path() / "sub" / "b.npy") << "b";
      // A staging folder, as pao mutate and the npy writer make one, with a file written into it.
      pao::TemporaryFolder staging(dir.path(), "OUT");
      pao::write_file_atomically(staging.path() / "case.safetensors", as_bytes(std::string("done")));
      std::raise(sig);
      ::_exit(3);  // not reached
    });
    CHECK(status == 130);
    const auto left = dir.files();
    REQUIRE(left.size() == 1);
    CHECK(left[0].filename() == "kept.txt");
  }
}

TEST_CASE("atomic file: a temporary folder published and released is neither removed nor cleaned up") {
  TempDir dir;
  const fs::path target = dir.path() / "published";
  const int status = exit_status_of_child([&] {
    pao::install_temporary_cleanup();
    pao::TemporaryFolder staging(dir.path(), "published");
    pao::write_file_atomically(staging.path() / "a.npy", as_bytes(std::string("a")));
    fs::rename(staging.path(), target);
    staging.release();
    std::raise(SIGTERM);  // after the release: the published folder is not the handler's
  });
  CHECK(status == 130);
  CHECK(slurp(target / "a.npy") == "a");
  {
    pao::TemporaryFolder staging(dir.path(), "second");
    fs::rename(staging.path(), dir.path() / "second");
    staging.release();
  }
  CHECK(fs::is_directory(dir.path() / "second"));
}

TEST_CASE("atomic file: a folder named as another process's temporary is not registered") {
  TempDir dir;
  const fs::path other = dir.path() / ".OUT.pao-tmp-1-0";  // pid 1: never this test's
  fs::create_directories(other);
  const int status = exit_status_of_child([&] {
    pao::install_temporary_cleanup();
    pao::write_file_atomically(other / "case.safetensors", as_bytes(std::string("theirs")));
    std::raise(SIGTERM);
  });
  CHECK(status == 130);
  CHECK(slurp(other / "case.safetensors") == "theirs");
}

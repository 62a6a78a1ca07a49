// Tests of pao/io/output_path.hpp: an output over an input is refused by whatever path names it
// (the same path, "./", "..", a symbolic or a hard link, a file inside an input folder); an output
// beside the inputs, or over an input that does not exist, is not.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pao/core/error.hpp"
#include "pao/io/output_path.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using pao::InputPath;
using pao::output_over_input;

TEST_CASE("output path: an output that is an input, or inside an input folder, is refused") {
  pao::test::TempDir dir("pao_test_output_path");
  const fs::path golden = dir.path() / "golden", file = golden / "case.safetensors";
  fs::create_directories(golden);
  std::ofstream(file) << "x";
  const InputPath in{"GOLDEN", golden};

  CHECK(output_over_input("--json", golden, in).find("--json " + golden.string() + ": that is GOLDEN") == 0);
  CHECK_FALSE(output_over_input("--json", golden / "." / "", in).empty());
  CHECK_FALSE(output_over_input("--json", dir.path() / "x" / ".." / "golden", in).empty());
  CHECK(output_over_input("--json", file, in).find("inside the folder") != std::string::npos);
  CHECK_FALSE(output_over_input("--json", golden / "new" / "report.json", in).empty());
  fs::create_directory_symlink(golden, dir.path() / "link");
  CHECK_FALSE(output_over_input("--json", dir.path() / "link", in).empty());
  CHECK_FALSE(output_over_input("--json", dir.path() / "link" / "r.json", in).empty());
  fs::create_hard_link(file, dir.path() / "hard.safetensors");
  CHECK_FALSE(output_over_input("OUT", dir.path() / "hard.safetensors", {"GOLDEN", file}).empty());
  CHECK_THROWS_WITH_AS(pao::refuse_output_over_input("--json", file, {{"ACTUAL", dir.path() / "none"}, in}),
                       doctest::Contains("(GOLDEN)"), pao::Error);
}

TEST_CASE("output path: an output beside the inputs, an empty one, or over a missing input is fine") {
  pao::test::TempDir dir("pao_test_output_path");
  const fs::path golden = dir.path() / "golden";
  fs::create_directories(golden);
  const InputPath in{"GOLDEN", golden};
  CHECK(output_over_input("--json", dir.path() / "report.json", in).empty());
  CHECK(output_over_input("--json", dir.path() / "golden2", in).empty());  // a prefix of the name only
  CHECK(output_over_input("OUT", dir.path(), in).empty());                 // a folder above the input
  CHECK(output_over_input("--json", "", in).empty());
  CHECK(output_over_input("--out", "h200", {"--device", "h200"}).empty());  // a device name, no file
  CHECK_NOTHROW(pao::refuse_output_over_input("--json", dir.path() / "r.json", {in, {"ACTUAL", ""}}));
}

TEST_CASE("output path: inside a folder of vendor outputs only what the command would read is refused") {
  pao::test::TempDir dir("pao_test_output_path");
  const fs::path vendor = dir.path() / "vendor";
  fs::create_directories(vendor / "case-a");
  const InputPath actual{"ACTUAL", vendor, false};
  CHECK(output_over_input("--json", vendor / "report.json", actual).empty());  // a report beside them
  CHECK(
      output_over_input("--json", vendor / "x.safetensors", actual).find("a tensor file or folder inside") !=
      std::string::npos);
  CHECK_FALSE(output_over_input("--json", vendor / "x.npy", actual).empty());
  CHECK_FALSE(output_over_input("--json", vendor / "case-a", actual).empty());  // an npy folder of a case
  CHECK_FALSE(output_over_input("--json", vendor, actual).empty());             // the folder itself
}

TEST_CASE("output path: two outputs of one command on the same file are refused") {
  pao::test::TempDir dir("pao_test_output_path");
  const fs::path a = dir.path() / "s.csv";
  CHECK_THROWS_WITH_AS(pao::refuse_shared_outputs({{"--csv", a}, {"--svg", dir.path() / "." / "s.csv"}}),
                       doctest::Contains("are the same file"), pao::Error);
  CHECK_NOTHROW(pao::refuse_shared_outputs({{"--csv", a}, {"--svg", dir.path() / "s.svg"}}));
  CHECK_NOTHROW(pao::refuse_shared_outputs({{"--csv", a}, {"--svg", ""}, {"--json", ""}}));
}

TEST_CASE("output path: a report path that cannot be written is refused before the run, naming the option") {
  pao::test::TempDir dir("pao_test_output_path");
  const auto message = [](const fs::path& p) {
    try {
      pao::require_writable_file_path("--json", p);
    } catch (const pao::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(dir.path()).find("--json " + dir.path().string() + ": is a folder") == 0);
  CHECK(message(dir.path() / "nonexistent" / "x.json").find("does not exist") != std::string::npos);
  { std::ofstream(dir.path() / "file") << "x"; }
  CHECK(message(dir.path() / "file" / "x.json").find("is not a folder") != std::string::npos);
  CHECK(message(dir.path() / "report.json").empty());
  CHECK(message("").empty());
  CHECK(message("relative-report.json").empty());  // the current folder
}

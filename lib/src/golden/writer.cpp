// Golden files on disk: safetensors, or an npy folder with meta.json (pao/golden/writer.hpp).
#include "pao/golden/writer.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/io/atomic_file.hpp"
#include "pao/io/npy.hpp"
#include "pao/io/sha256.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

using nlohmann::json;

/// A folder name next to `target` that no other writer uses.
fs::path scratch_name(const fs::path& target, std::string_view what) {
  static std::atomic<int> counter{0};
  std::string name = ".";
  name += target.filename().string();
  name += ".pao-";
  name += what;
  name += '-';
  name += std::to_string(::getpid());
  name += '-';
  name += std::to_string(counter++);
  return target.parent_path() / name;
}

WrittenGolden write_npy_folder(const GoldenTensors& g, const fs::path& dir, const std::string& name) {
  const fs::path target = dir / name;
  // Built in a temporary folder beside it (removed on an error or a signal), then published.
  TemporaryFolder staging(dir, name);
  const fs::path& tmp = staging.path();
  {
    json tensors = json::array();
    for (const auto& [tensor_name, t] : g.tensors) {
      const std::string file = tensor_name + ".npy";
      const NpyWritten w = write_npy(tmp / file, t.view());
      tensors.push_back({{"name", tensor_name},
                         {"file", file},
                         {"dtype", std::string(dtype_name(t.dtype()))},
                         {"npy_descr", std::string(w.encoding.descr)},
                         {"raw_bits", w.encoding.raw_bits},
                         {"shape", t.shape()},
                         {"sha256", w.file.sha256}});
    }
    json meta;
    meta["format"] = "pao-golden-npy";
    meta["format_version"] = kGoldenFormatVersion;
    meta["case_id"] = g.golden_case.id;
    meta["case"] = json::parse(cases::case_to_json(g.golden_case));
    meta["metadata"] = g.metadata;
    meta["tensors"] = tensors;
    const std::string meta_text = meta.dump(1) + "\n";
    write_file_atomically(tmp / "meta.json", std::as_bytes(std::span(meta_text.data(), meta_text.size())));
  }
  // Publish: the old folder (if any) moves aside, the new one takes its name, the old one goes.
  const fs::path old = scratch_name(target, "old");
  const bool had_old = fs::exists(target);
  if (had_old) fs::rename(target, old);
  fs::rename(tmp, target);
  staging.release();
  if (had_old) fs::remove_all(old);

  WrittenGolden w;
  w.file = name;
  w.sha256 = sha256_file_hex(target / "meta.json");
  for (const auto& entry : fs::directory_iterator(target)) w.bytes += entry.file_size();
  return w;
}

}  // namespace

std::string to_string(GoldenFormat format) {
  return format == GoldenFormat::safetensors ? "safetensors" : "npy";
}

GoldenFormat parse_golden_format(std::string_view text) {
  if (text == "safetensors") return GoldenFormat::safetensors;
  if (text == "npy") return GoldenFormat::npy;
  fail("--format ", text, ": expected safetensors or npy");
}

std::string golden_file_name(const std::string& id, GoldenFormat format) {
  return format == GoldenFormat::safetensors ? id + ".safetensors" : id;
}

WrittenGolden write_golden(const GoldenTensors& golden, const fs::path& dir, GoldenFormat format) {
  fs::create_directories(dir);
  const std::string name = golden_file_name(golden.golden_case.id, format);
  if (format == GoldenFormat::npy) return write_npy_folder(golden, dir, name);
  const WrittenFile f = write_safetensors(dir / name, golden.views(), golden.metadata);
  return WrittenGolden{name, f.sha256, f.size};
}

}  // namespace pao::golden

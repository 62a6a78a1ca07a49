// Verifying goldens: hashes, invariants, recomputation (pao/golden/verify.hpp).
#include "pao/golden/verify.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/json_read.hpp"

namespace pao::golden {

namespace {

std::string index_text(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

/// `text` quoted, cut to 80 characters (a value edited to be huge stays one short line).
std::string quoted(const std::string& text) {
  return "\"" + (text.size() > 80 ? text.substr(0, 80) + "[...]" : text) + "\"";
}

std::set<std::string> split_names(const std::string& text) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.insert(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// An npy golden's meta.json holds, beside the flat "metadata" harnesses read (checked against the
/// case below), a top-level format, format_version, case_id and case of its own: each must be the
/// metadata's (and the version this pao writes), or a harness reading either copy reads another golden.
void npy_top_level_mismatches(const TensorFile& file, std::vector<std::string>& out) {
  const std::filesystem::path meta_path = file.path() / "meta.json";
  if (!file.is_npy() || !std::filesystem::exists(meta_path)) return;
  const nlohmann::json top = parse_json(read_text_file(meta_path, meta_path.string()), meta_path.string());
  const SafetensorsMetadata& meta = file.metadata();
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  auto flat = [&](const char* key) {
    const auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  if (!top.contains("format_version") || text(top["format_version"]) != kGoldenFormatVersion)
    out.push_back("meta.json's top-level format_version is " +
                  quoted(top.contains("format_version") ? text(top["format_version"]) : "missing") +
                  ": this pao writes and reads version " + kGoldenFormatVersion);
  if (!top.contains("format") || text(top["format"]) != "pao-golden-npy")
    out.push_back("meta.json's top-level format is " +
                  quoted(top.contains("format") ? text(top["format"]) : "missing") +
                  ", expected \"pao-golden-npy\"");
  if (!top.contains("case_id") || text(top["case_id"]) != flat("case_id"))
    out.push_back("meta.json's top-level 'case_id' is " +
                  quoted(top.contains("case_id") ? text(top["case_id"]) : "missing") +
                  ", but the metadata's is " + quoted(flat("case_id")));
  if (!top.contains("case")) {
    out.push_back("meta.json's top-level 'case' is missing");
    return;
  }
  nlohmann::json flat_case;
  try {
    flat_case = parse_json(flat("case"), meta_path.string() + " (metadata \"case\")");
  } catch (const Error&) {
    return;  // golden_case_of refused it already
  }
  if (top["case"] == flat_case) return;
  std::string keys;
  if (top["case"].is_object() && flat_case.is_object()) {
    std::set<std::string> all;
    for (const auto& [k, v] : top["case"].items()) all.insert(k);
    for (const auto& [k, v] : flat_case.items()) all.insert(k);
    for (const auto& k : all)
      if (!top["case"].contains(k) || !flat_case.contains(k) || top["case"][k] != flat_case[k])
        keys += (keys.empty() ? "" : ", ") + k;
  }
  out.push_back("meta.json's top-level 'case' is not the metadata's case" +
                (keys.empty() ? std::string() : " (they differ in " + keys + ")") +
                ": a harness reading it would build another case than the tensors'");
}

}  // namespace

std::vector<std::string> metadata_mismatches(const TensorFile& file) {
  const cases::Case c = golden_case_of(file);
  const SafetensorsMetadata& meta = file.metadata();
  std::vector<std::string> out;
  npy_top_level_mismatches(file, out);
  // The format first: a version this pao does not write may mean other keys and tensors.
  const auto version = meta.find("format_version");
  if (version != meta.end() && version->second != kGoldenFormatVersion)
    out.push_back("format_version is " + quoted(version->second) + ": this pao writes and reads version " +
                  kGoldenFormatVersion +
                  " (regenerate the golden with pao golden, or use the pao that wrote it)");
  std::vector<std::string> held;  // the outputs the file holds, whatever its "outputs" says
  for (const auto& name : golden_output_names(c.kernel))
    if (file.has(name)) held.push_back(name);
  std::int64_t num_blocks = -1;
  for (const char* cache : {"key_cache", "key_cache_before"})
    if (num_blocks < 0 && file.has(cache)) {
      const Tensor t = file.read(cache);
      if (t.rank() > 0) num_blocks = t.size(0);
    }
  for (const auto& [key, want] : golden_metadata(c, std::max<std::int64_t>(num_blocks, 0), held)) {
    if (key == "case" || key == "pao_version" || key == "format_version") continue;  // the source; any pao
    if (key == "num_blocks" && num_blocks < 0) continue;                             // no cache to size it
    const auto it = meta.find(key);
    if (it == meta.end()) {
      out.push_back("'" + key + "' is missing (the case gives " + quoted(want) + ")");
    } else if (key == "outputs" ? split_names(it->second) != split_names(want) : it->second != want) {
      out.push_back("'" + key + "' is " + quoted(it->second) + ", but " +
                    (key == "outputs"      ? "the file holds "
                     : key == "num_blocks" ? "the caches hold "
                                           : "the case gives ") +
                    quoted(want) + " (harnesses read this key, not the case)");
    }
  }
  return out;
}

std::vector<std::string> recompute_mismatches(const TensorFile& file) {
  const GoldenTensors fresh = make_golden(golden_case_of(file));
  // Outputs `pao golden --outputs` left out are not in the metadata's "outputs" list.
  const auto listed = file.metadata().find("outputs");
  const std::string held = listed == file.metadata().end() ? "" : "," + listed->second + ",";
  const auto& outputs = golden_output_names(fresh.golden_case.kernel);
  std::vector<std::string> out;
  for (const auto& [name, t] : fresh.tensors) {
    if (!file.has(name)) {
      const bool output = std::find(outputs.begin(), outputs.end(), name) != outputs.end();
      if (!output || held.find("," + name + ",") != std::string::npos)
        out.push_back(name + ": missing from the file");
      continue;
    }
    const Tensor stored = file.read(name, t.dtype());
    if (stored.dtype() != t.dtype() || stored.shape() != t.shape()) {
      out.push_back(name + ": " + std::string(dtype_name(stored.dtype())) + " " +
                    shape_to_string(stored.shape()) + " in the file, " + std::string(dtype_name(t.dtype())) +
                    " " + shape_to_string(t.shape()) + " recomputed");
      continue;
    }
    const std::size_t elem = dtype_size(t.dtype());
    std::int64_t differing = 0, first = -1;
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (std::memcmp(stored.bytes() + i * elem, t.bytes() + i * elem, elem) != 0) {
        if (first < 0) first = i;
        ++differing;
      }
    if (differing > 0)
      out.push_back(name + ": " + std::to_string(differing) + " of " + std::to_string(t.numel()) +
                    " elements differ from the recomputed golden, the first at " +
                    index_text(t.shape(), first));
  }
  return out;
}

GoldenCheck verify_golden(const GoldenFolder& folder, const GoldenRef& ref, bool recompute) {
  GoldenCheck c;
  c.id = ref.id;
  c.path = ref.path;
  if (folder.manifest) {
    if (const ManifestEntry* e = folder.manifest->find(ref.id)) {
      c.hashed = true;
      c.hash = golden_hash_mismatch(folder.dir, *e);
    }
  }
  try {
    const TensorFile file = TensorFile::open(ref.path);
    c.metadata_mismatches = metadata_mismatches(file);
    c.invariants = check_golden_invariants(file);
    if (recompute) {
      c.recomputed = true;
      c.recompute_mismatches = recompute_mismatches(file);
    }
  } catch (const Error& e) {
    c.error = e.what();
  } catch (const std::filesystem::filesystem_error& e) {
    c.error = ref.path.string() + ": cannot read: " + e.code().message();
  }
  return c;
}

}  // namespace pao::golden

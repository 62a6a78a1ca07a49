// Tensor-by-tensor reading of safetensors files and npy folders (pao/golden/reader.hpp).
#include "pao/golden/reader.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "pao/core/error.hpp"
#include "pao/golden/manifest.hpp"
#include "pao/io/byte_source.hpp"
#include "pao/io/json_read.hpp"
#include "pao/io/npy.hpp"
#include "pao/kinds/golden_tensor_lists.hpp"
#include "pao/kinds/kernel_kind.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

using nlohmann::json;

void read_meta_json(const fs::path& dir, SafetensorsMetadata& metadata,
                    std::map<std::string, std::pair<fs::path, std::optional<DType>>>& files) {
  const fs::path meta_path = dir / "meta.json";
  const json meta = parse_json(read_text_file(meta_path, meta_path.string()), meta_path.string());
  try {
    if (meta.contains("metadata"))
      for (const auto& [k, v] : meta.at("metadata").items()) metadata[k] = v.get<std::string>();
    if (meta.contains("case") && !metadata.count("case")) metadata["case"] = meta["case"].dump();
    if (meta.contains("tensors")) {
      for (const auto& t : meta.at("tensors")) {
        const std::string name = t.at("name").get<std::string>();
        const std::string file = t.at("file").get<std::string>();
        // One rule with the manifests' files: inside the folder, by name and once links are resolved.
        files[name] = {file_inside_folder(dir, file, meta_path.string() + ", tensor '" + excerpt(name) + "'"),
                       parse_dtype(t.at("dtype").get<std::string>(), "meta.json dtype of " + name)};
      }
    }
  } catch (const json::exception& e) {
    fail(meta_path.string(), ": malformed: ", excerpt(e.what()));
  }
}

}  // namespace

TensorFile TensorFile::open(const fs::path& path) {
  TensorFile f;
  f.path_ = path;
  try {
    if (fs::is_directory(path)) {
      f.npy_ = true;
      if (fs::exists(path / "meta.json")) read_meta_json(path, f.metadata_, f.npy_files_);
      // Plain folders (a vendor's outputs): every <name>.npy that meta.json does not list.
      for (const auto& entry : fs::directory_iterator(path)) {
        const std::string file = entry.path().filename().string();
        std::error_code ec;  // an entry that cannot be examined (a symlink loop) is no tensor
        if (!entry.is_regular_file(ec) || entry.path().extension() != ".npy") continue;
        const std::string name = file.substr(0, file.size() - 4);
        if (!f.npy_files_.count(name)) f.npy_files_[name] = {entry.path(), std::nullopt};
      }
      return f;
    }
    if (!fs::is_regular_file(path)) fail(path.string(), ": no such file or folder");
  } catch (const fs::filesystem_error& e) {
    // The file's own error (a symlink loop, no permission), for the one case that reads it.
    fail(path.string(), ": cannot read: ", e.code().message());
  }
  auto source = std::make_shared<FileSource>(path);
  f.header_ = read_safetensors_header(*source);
  f.metadata_ = f.header_.metadata;
  f.source_ = std::move(source);
  return f;
}

TensorFile TensorFile::in_memory(const std::string& name, SafetensorsMetadata metadata,
                                 std::vector<std::pair<std::string, Tensor>> tensors) {
  TensorFile f;
  f.path_ = name;
  f.metadata_ = std::move(metadata);
  f.memory_ = std::make_shared<const std::vector<std::pair<std::string, Tensor>>>(std::move(tensors));
  return f;
}

std::vector<std::string> TensorFile::names() const {
  std::vector<std::string> out;
  if (memory_) {
    for (const auto& [name, unused] : *memory_) out.push_back(name);
  } else if (npy_) {
    for (const auto& [name, unused] : npy_files_) out.push_back(name);
  } else {
    for (const auto& e : header_.entries) out.push_back(e.name);
  }
  return out;
}

bool TensorFile::has(const std::string& name) const {
  if (memory_)
    return std::any_of(memory_->begin(), memory_->end(),
                       [&](const auto& named) { return named.first == name; });
  return npy_ ? npy_files_.count(name) > 0 : header_.find(name) != nullptr;
}

Tensor TensorFile::read(const std::string& name, std::optional<DType> expected) const {
  if (memory_) {
    for (const auto& [n, t] : *memory_)
      if (n == name) return Tensor::copy_of(t.view());
    fail(path_.string(), ": no tensor '", name, "'");
  }
  if (!npy_) {
    const SafetensorsEntry* e = header_.find(name);
    if (!e) fail(path_.string(), ": no tensor '", name, "'");
    return read_safetensors_tensor(*source_, *e);
  }
  auto it = npy_files_.find(name);
  if (it == npy_files_.end()) fail(path_.string(), ": no tensor '", name, "' (no ", name, ".npy)");
  const auto& [file, declared] = it->second;
  if (declared) return read_npy(file, *declared);
  if (expected && (*expected == DType::bf16 || is_fp8(*expected))) {
    try {
      return read_npy(file, *expected);  // raw bits of a dtype numpy does not have
    } catch (const Error&) {
      // Not raw bits (e.g. a bf16 output saved as float32): read it as what it says it is.
    }
  }
  return read_npy(file);
}

cases::Case golden_case_of(const TensorFile& file) {
  auto it = file.metadata().find("case");
  if (it == file.metadata().end())
    fail(file.path().string(),
         ": not a pao golden (its metadata has no \"case\"; was it written by pao golden?)");
  return cases::parse_case(it->second, file.path().string() + " (metadata \"case\")");
}

namespace {

/// A seeded case of a kind from its spec and its golden inputs (pao/kinds/golden_tensor_lists.hpp),
/// `input(name)` giving each (an empty tensor for an absent alibi_slopes or integer-cache param).
template <typename C, std::size_t N, typename Input>
C seeded_case_from(const cases::Case& spec, const std::array<kinds::CaseTensor<C>, N>& inputs,
                   Input&& input) {
  C c;
  c.spec = spec;
  kinds::read_tensors(c, inputs, input);
  return c;
}

/// A write_and_attend case from its inputs: the caches before, then the new tokens' write.
template <typename Input>
cases::WriteAndAttendCase write_and_attend_case_from(const cases::Case& spec, Input&& input) {
  cases::WriteAndAttendCase w;
  kinds::read_tensors(w, kinds::kWriteAndAttendInputs, input);
  cases::PrefixCase& c = w.step;
  c.spec = spec;
  c.spec.kernel = cases::CaseKernel::prefix;
  c.spec.cache_new_tokens = false;
  c.key_cache = Tensor::copy_of(w.key_cache_before.view());
  c.value_cache = Tensor::copy_of(w.value_cache_before.view());
  c.quant = w.quant_before.copy();
  cases::write_new_tokens(c);
  return w;
}

/// The golden at `path`, checked to be one of `kernel`, and a reader of its inputs only.
struct GoldenInputs {
  TensorFile file;
  cases::Case spec;

  GoldenInputs(const fs::path& path, cases::CaseKernel kernel)
      : file(TensorFile::open(path)), spec(golden_case_of(file)) {
    if (spec.kernel != kernel)
      fail(path.string(), ": a golden of the ", cases::to_string(spec.kernel), " kernel (case ", spec.id,
           "), not of the ", cases::to_string(kernel), " kernel");
  }
  Tensor operator()(std::string_view name) const {
    const std::string n(name);
    return !kinds::golden_tensor_applies(spec, n) && !file.has(n) ? Tensor() : file.read(n);
  }
};

}  // namespace

Tensor input_copy(const GoldenTensors& g, std::string_view name) {
  const Tensor* t = g.find(name);
  return t ? Tensor::copy_of(t->view()) : Tensor();
}

cases::DecodeCase decode_case_of(const GoldenTensors& g) {
  require(g.golden_case.kernel == cases::CaseKernel::decode, "golden ", g.golden_case.id,
          ": not a decode case");
  return seeded_case_from(g.golden_case, kinds::kDecodeInputs,
                          [&](std::string_view name) { return input_copy(g, name); });
}

cases::PrefixCase prefix_case_of(const GoldenTensors& g) {
  require(g.golden_case.kernel == cases::CaseKernel::prefix, "golden ", g.golden_case.id,
          ": not a prefix case");
  return seeded_case_from(g.golden_case, kinds::kPrefixInputs,
                          [&](std::string_view name) { return input_copy(g, name); });
}

cases::WriteAndAttendCase write_and_attend_case_of(const GoldenTensors& g) {
  require(g.golden_case.kernel == cases::CaseKernel::write_and_attend, "golden ", g.golden_case.id,
          ": not a write_and_attend case");
  return write_and_attend_case_from(g.golden_case,
                                    [&](std::string_view name) { return input_copy(g, name); });
}

cases::DecodeCase load_decode_case(const fs::path& path) {
  const GoldenInputs inputs(path, cases::CaseKernel::decode);
  return seeded_case_from(inputs.spec, kinds::kDecodeInputs, inputs);
}

cases::PrefixCase load_prefix_case(const fs::path& path) {
  const GoldenInputs inputs(path, cases::CaseKernel::prefix);
  return seeded_case_from(inputs.spec, kinds::kPrefixInputs, inputs);
}

GoldenTensors read_golden(const TensorFile& file, bool complete) {
  GoldenTensors g;
  g.golden_case = golden_case_of(file);
  g.metadata = file.metadata();
  for (const auto& name : file.names()) g.tensors.emplace_back(name, file.read(name));
  if (complete) complete_outputs(g);  // the outputs `pao golden --outputs` left out
  return g;
}

}  // namespace pao::golden

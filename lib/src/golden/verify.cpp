// Verifying goldens: hashes, invariants, recomputation (pao/golden/verify.hpp).
#include "pao/golden/verify.hpp"

#include <algorithm>
#include <cstring>

#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/golden/tensors.hpp"

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

}  // namespace

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
    c.invariants = check_golden_invariants(file);
    if (recompute) {
      c.recomputed = true;
      c.recompute_mismatches = recompute_mismatches(file);
    }
  } catch (const Error& e) {
    c.error = e.what();
  }
  return c;
}

}  // namespace pao::golden

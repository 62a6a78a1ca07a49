// The cases of a golden folder: the entries of its manifest.json, or, without one, every
// <id>.safetensors file and npy folder in it whose metadata names a case. `pao diff` and
// `pao verify` read folders through it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pao/golden/manifest.hpp"

namespace pao::golden {

struct GoldenRef {
  std::string id;
  std::filesystem::path path;
};

struct GoldenFolder {
  std::filesystem::path dir;
  std::optional<Manifest> manifest;  // DIR/manifest.json, when there is one
  std::vector<GoldenRef> cases;      // manifest order, else sorted by file name
};

/// Throws pao::Error naming the folder when it holds no goldens, or its manifest is malformed.
GoldenFolder list_goldens(const std::filesystem::path& dir);

/// One golden file or npy folder as a folder of one case: its id, and its folder's manifest when
/// that lists it (so that its hash can be checked). Throws pao::Error if it is not a pao golden.
GoldenFolder golden_of_one(const std::filesystem::path& golden);

}  // namespace pao::golden

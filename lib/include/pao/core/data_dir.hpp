// Where pao's embedded defaults live: data/ (case suites in data/cases, device descriptors in
// data/devices, measurements). One lookup for every tool: $PAO_DATA_DIR when set, else the source
// tree's data/ folder compiled in.
#pragma once

#include <filesystem>

namespace pao {

std::filesystem::path data_dir();

}  // namespace pao

// pao::data_dir (pao/core/data_dir.hpp).
#include "pao/core/data_dir.hpp"

#include <cstdlib>

#ifndef PAO_DATA_DIR
#define PAO_DATA_DIR "data"
#endif

namespace pao {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PAO_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return PAO_DATA_DIR;
}

}  // namespace pao

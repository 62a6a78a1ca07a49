// pao::data_dir (pao/core/data_dir.hpp).
#include "pao/core/data_dir.hpp"

#include <cstdlib>
#include <system_error>
#include <vector>

#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define PAO_HAVE_DLADDR 1
#endif

// lib/CMakeLists.txt defines these on this file only.
#ifndef PAO_DATA_DIR
#define PAO_DATA_DIR "data"
#endif
#ifndef PAO_DATA_DIR_FROM_BIN  // <prefix>/bin -> <prefix>/share/pao/data
#define PAO_DATA_DIR_FROM_BIN "../share/pao/data"
#endif
#ifndef PAO_DATA_DIR_FROM_LIB  // <prefix>/lib -> <prefix>/share/pao/data
#define PAO_DATA_DIR_FROM_LIB "../share/pao/data"
#endif
#ifndef PAO_INSTALL_DATA_DIR  // <configured prefix>/share/pao/data
#define PAO_INSTALL_DATA_DIR ""
#endif

namespace pao {

namespace fs = std::filesystem;

namespace {

/// Where an installed data folder may be, relative to the running code: the shared object holding
/// libpao when it is linked into one (an install's lib/, or a Python wheel's package folder with
/// `data/` beside the module), then the executable (an install's bin/).
std::vector<fs::path> installed_candidates() {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
#ifdef PAO_HAVE_DLADDR
  // For code in the executable itself glibc reports argv[0] (relative, or a bare name found on
  // PATH): only an absolute path other than the executable's is taken for a shared object.
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&data_dir), &info) != 0 && info.dli_fname != nullptr &&
      fs::path(info.dli_fname).is_absolute()) {
    const fs::path module = fs::canonical(info.dli_fname, ec);
    if (!ec && module != exe)
      for (const char* relative : {PAO_DATA_DIR_FROM_LIB, PAO_DATA_DIR_FROM_BIN, "data"})
        out.push_back(module.parent_path() / relative);
  }
#endif
  if (!exe.empty())
    for (const char* relative : {PAO_DATA_DIR_FROM_BIN, PAO_DATA_DIR_FROM_LIB})
      out.push_back(exe.parent_path() / relative);
  return out;
}

fs::path located_data_dir() {
  std::error_code ec;
  for (const fs::path& candidate : installed_candidates())  // an install has its case suites
    if (fs::is_directory(candidate / "cases", ec)) return candidate.lexically_normal();
  if (fs::is_directory(PAO_DATA_DIR, ec)) return PAO_DATA_DIR;
  if (*PAO_INSTALL_DATA_DIR != '\0' && fs::is_directory(PAO_INSTALL_DATA_DIR, ec))
    return PAO_INSTALL_DATA_DIR;
  return PAO_DATA_DIR;
}

}  // namespace

fs::path data_dir() {
  if (const char* env = std::getenv("PAO_DATA_DIR"); env != nullptr && *env != '\0') return env;
  static const fs::path located = located_data_dir();  // thread-safe, once per process
  return located;
}

}  // namespace pao

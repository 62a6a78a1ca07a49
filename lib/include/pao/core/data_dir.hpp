// Where pao's embedded defaults live: data/ (case suites in data/cases, device descriptors in
// data/devices, measurements). One lookup for every tool and every program linked with libpao.
#pragma once

#include <filesystem>

namespace pao {

/// The data folder, the first of:
///   1. $PAO_DATA_DIR, when set and not empty (taken as is, even if it does not exist);
///   2. the installed copy next to the running code: `share/pao/data` (the install's
///      CMAKE_INSTALL_DATADIR/pao/data) relative to the folder of the module holding libpao —
///      the shared object when libpao is linked into one (dladdr; there a `data/` beside it, the
///      Python wheel's layout, is tried too), then the executable (/proc/self/exe); the path is
///      tried as seen from bin/ and from lib/. So an installed `bin/pao` finds its data wherever
///      the prefix was moved to;
///   3. the source tree's data/ compiled in (in-tree builds, and programs linked against an
///      install whose build tree still exists);
///   4. the install prefix's data folder compiled in (CMAKE_INSTALL_FULL_DATADIR/pao/data), for a
///      program outside the prefix linked against an install made to its configured prefix.
/// Steps 2 to 4 take a folder only if it exists (step 2: only if it holds cases/); when none does,
/// the answer is step 3's path, so that "not found" errors name it. Steps 2 to 4 are worked out
/// once per process.
std::filesystem::path data_dir();

}  // namespace pao

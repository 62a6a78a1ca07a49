#!/usr/bin/env bash
# The test command of README.md (and of .ci/run): installs dependencies, builds with
# -Werror, runs every doctest suite through ctest, then builds again with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the suites once more. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
jobs=$(nproc)

echo "== build (Release, -Werror) =="
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
echo "== tests =="
ctest --preset ci -j "$jobs"

echo "== build (ASan + UBSan) =="
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
echo "== tests under ASan + UBSan =="
ctest --preset asan -j "$jobs"

#!/usr/bin/env bash
# The test command of README.md (and of .ci/run): installs dependencies, builds with
# -Werror, runs every doctest suite through ctest, then builds again with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the suites once more. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
jobs=$(nproc)

echo "== fuzz the file and case readers (libFuzzer, 20 s each) =="
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPAO_FUZZ=ON -DPAO_CUDA=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target fuzz_safetensors fuzz_npy fuzz_case_json
tests/fuzz/run_fuzz.sh build/fuzz 20

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

#!/usr/bin/env bash
# The test command of README.md (and of .ci/run): installs dependencies, builds with
# -Werror, runs every doctest suite through ctest, installs the Python package and runs its pytest
# suite, then builds again with AddressSanitizer and UndefinedBehaviorSanitizer and runs the
# suites once more. Exits non-zero on any failure.
# Compiles through ccache (cache under $HOME/.cache/ccache): a second run on the same machine, in
# any checkout, reuses the objects of the first.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
jobs=$(nproc)
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
command -v ccache >/dev/null && ccache --zero-stats >/dev/null

echo "== format (.clang-format) =="
# The layout is pinned to clang-format 14 (Debian 12's); other versions format some constructs
# differently, so they only report.
if [ "$(clang-format --version | sed -E 's/.*version ([0-9]+).*/\1/')" = 14 ]; then
  find lib sim cuda tests tools python/src -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) \
    -print0 | xargs -0 clang-format --dry-run -Werror
  echo "all files formatted"
else
  echo "skipped: $(clang-format --version) is not clang-format 14"
fi

echo "== fuzz the file and case readers (libFuzzer, 20 s each) =="
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPAO_FUZZ=ON -DPAO_CUDA=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target fuzz_safetensors fuzz_npy fuzz_case_json
tests/fuzz/run_fuzz.sh build/fuzz 20

echo "== build (Release, -Werror) =="
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
echo "== tests =="
ctest --preset ci -j "$jobs"

echo "== Python package: pip install . (build/python, incremental), then its pytest suite =="
py=python3
[ -x .venv/bin/python3 ] && py=.venv/bin/python3
if ! "$py" -c "import nanobind, scikit_build_core, pytest, torch" 2>/dev/null; then
  echo "pao: $py lacks nanobind, scikit-build-core, pytest or torch (tools/scripts/install-deps.sh installs them)" >&2
  exit 1
fi
"$py" -m pip install -q --no-build-isolation .
"$py" -m pytest -q -p no:cacheprovider tests/python/test_pao_ops.py tests/python/test_pao_package.py

echo "== build (ASan + UBSan): what the tests run =="
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs" --target pao_tests pao_cli pao_write_interop_sample
if command -v ccache >/dev/null; then
  echo "== ccache (this run's compilations) =="
  ccache --show-stats | grep -E "Hits|Misses|Cache size" || true
fi
echo "== tests under ASan + UBSan =="
ctest --preset asan -j "$jobs"

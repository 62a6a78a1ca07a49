#!/usr/bin/env bash
# Runs each libFuzzer target (fuzz_safetensors, fuzz_npy, fuzz_case_json) for SECONDS seconds on
# its seed corpus.
# Usage: tests/fuzz/run_fuzz.sh BUILD_DIR [SECONDS]   (BUILD_DIR configured with -DPAO_FUZZ=ON
# and clang++). New inputs go to a temporary folder, not into the committed corpus; a crashing
# input is saved as BUILD_DIR/fuzz-artifacts/<target>-crash-*. Exits non-zero if any target fails.
set -uo pipefail

build_dir=${1:?usage: run_fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"

passed=0
failed=0
for reader in safetensors npy case_json; do
  target=$(find "$build_dir" -type f -name "fuzz_$reader" -perm -u+x | head -n 1)
  if [[ -z "$target" ]]; then
    echo "run_fuzz: fuzz_$reader not found under $build_dir (configure with -DPAO_FUZZ=ON and clang++)" >&2
    failed=$((failed + 1))
    continue
  fi
  scratch=$(mktemp -d)
  echo "run_fuzz: $target for ${seconds}s"
  # -malloc_limit_mb: no input of at most 4 KiB may make the reader allocate 128 MiB at once.
  if "$target" -max_len=4096 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=128 \
      -dict="$here/$reader.dict" -artifact_prefix="$artifacts/$reader-" -print_final_stats=1 \
      "$scratch" "$here/corpus/$reader"; then
    passed=$((passed + 1))
  else
    echo "run_fuzz: fuzz_$reader FAILED; the input is in $artifacts" >&2
    failed=$((failed + 1))
  fi
  rm -rf "$scratch"
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]

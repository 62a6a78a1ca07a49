#!/usr/bin/env bash
# Builds on this (CPU) machine what a lent GPU runs (issue #37), in one archive under the device's
# 64 MiB carry limit: pao, and pao-cuda (pao-cuda-check, pao-cuda-bench and pao-cuda-probe in one
# binary, the kernels' fat binary once; the three names are links to it) for sm_80 and sm_90 with
# portable host code (-DPAO_NATIVE=OFF: a -march=native binary may not run on the device's CPU) and
# compressed fat binaries (-Xfatbin=-compress-all), data/ (the suites and descriptors the tools read), the
# torch harnesses of examples/ with their suite, and run.sh, the one command to start there:
#
#   tools/gpu/package.sh [ARCHIVE]        (default: build-gpu/pao-gpu.tar.xz)
#   # on the GPU machine:  mkdir pkg && tar -xJf pao-gpu.tar.xz -C pkg && pkg/run.sh --out results
#
# Needs the CUDA toolkit (nvcc). Prints the archive's size and exits 1 if it is over 48 MiB (the
# carry limit less room for the run's own files).
set -euo pipefail
cd "$(dirname "$0")/../.."
archive=${1:-build-gpu/pao-gpu.tar.xz}
limit_mib=48
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAO_CUDA=ON -DPAO_NATIVE=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="80;90" -DCMAKE_CUDA_FLAGS="-Xfatbin=-compress-all" >/dev/null
cmake --build build-gpu -j "$(nproc)" --target pao_cli pao_cuda_multicall
pkg=build-gpu/package
rm -rf "$pkg"
mkdir -p "$pkg/bin"
cp build-gpu/tools/pao build-gpu/cuda/pao-cuda "$pkg/bin/"
strip "$pkg/bin/"*
for tool in check bench probe; do ln -s pao-cuda "$pkg/bin/pao-cuda-$tool"; done
cp -r data "$pkg/data"
cp tools/gpu/run.sh "$pkg/run.sh"
cp tools/scripts/cuda_vs_vllm.py "$pkg/"  # run.sh's cuda-vs-vllm stage
mkdir -p "$pkg/examples/cases"  # torch's kernels judged on the GPU (run.sh's torch stages)
cp examples/vendor_harness.py examples/vendor_harness_flex.py examples/vendor_harness_sdpa.py "$pkg/examples/"
cp examples/cases/flex.json "$pkg/examples/cases/"
mkdir -p "$(dirname "$archive")"
tar -cJf "$archive" -C "$pkg" .
size=$(stat -c %s "$archive")
echo "$archive: $((size / 1048576)) MiB ($size bytes; the binaries: $(du -sh "$pkg/bin" | cut -f1) unpacked)"
[ "$size" -le $((limit_mib * 1048576)) ] || { echo "package.sh: over $limit_mib MiB" >&2; exit 1; }

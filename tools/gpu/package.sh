#!/usr/bin/env bash
# Builds on this (CPU) machine what a lent GPU runs (issue #37), in one archive under the device's
# 64 MiB carry limit: pao, pao-cuda-check and pao-cuda-bench for sm_80 and sm_90 with portable host
# code (-DPAO_NATIVE=OFF: a -march=native binary may not run on the device's CPU) and compressed
# fat binaries (-Xfatbin=-compress-all), data/ (the suites and descriptors the tools read) and
# run.sh, the one command to start there:
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
cmake --build build-gpu -j "$(nproc)" --target pao_cli pao_cuda_check pao_cuda_bench
pkg=build-gpu/package
rm -rf "$pkg"
mkdir -p "$pkg/bin"
cp build-gpu/tools/pao build-gpu/cuda/pao-cuda-check build-gpu/cuda/pao-cuda-bench "$pkg/bin/"
strip "$pkg/bin/"*
cp -r data "$pkg/data"
cp tools/gpu/run.sh "$pkg/run.sh"
mkdir -p "$(dirname "$archive")"
tar -cJf "$archive" -C "$pkg" .
size=$(stat -c %s "$archive")
echo "$archive: $((size / 1048576)) MiB ($size bytes; the binaries: $(du -sh "$pkg/bin" | cut -f1) unpacked)"
[ "$size" -le $((limit_mib * 1048576)) ] || { echo "package.sh: over $limit_mib MiB" >&2; exit 1; }

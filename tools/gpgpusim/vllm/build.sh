#!/usr/bin/env bash
# Builds vllm-decode-bench (tools/gpgpusim/vllm/vllm_decode_bench.cu) against a vLLM source tree
# outside this repository, for GPGPU-Sim (sm_75, the shared CUDA runtime swapped for the
# simulator's as setup.sh does for pao's binaries). For measurement only: vLLM's code is compiled
# from DIR, never copied into pao.
#
#   tools/gpgpusim/vllm/build.sh --vllm DIR [--prefix DIR]
#
# DIR holds vLLM's csrc/ (a checkout, or the PyPI sdist: vllm-0.22.1.tar.gz, the last release with
# csrc/attention/attention_kernels.cuh; its decode kernels are those of the H200 rows,
# data/measurements/sm90-decode-registers.md). The torch headers vLLM's attention headers include
# are stand-ins (shim/): the kernels use none of torch. Flags: vLLM's for its _C kernels
# (-O3 -DNDEBUG --expt-relaxed-constexpr -DENABLE_FP8). The binary goes to PREFIX/bin
# (default build/gpgpusim/bin); run it with tools/gpgpusim/run.sh -- PREFIX/bin/vllm-decode-bench.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
vllm=""
prefix="$root/build/gpgpusim"
die() { echo "tools/gpgpusim/vllm/build.sh: error: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --vllm) vllm="${2:?--vllm needs a folder}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n "$vllm" ]] || die "--vllm DIR is needed (a vLLM source tree with csrc/attention/attention_kernels.cuh)"
[[ -f "$vllm/csrc/attention/attention_kernels.cuh" ]] \
  || die "$vllm/csrc/attention/attention_kernels.cuh not found (vLLM 0.22.1 is the last release that has it)"
command -v nvcc >/dev/null || die "nvcc is needed on PATH"
command -v patchelf >/dev/null || die "patchelf is needed (tools/gpgpusim/setup.sh installs it)"
mkdir -p "$prefix/bin"
out="$prefix/bin/vllm-decode-bench"
nvcc -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr -DENABLE_FP8 -arch=sm_75 --cudart shared \
  -I"$vllm/csrc" -I"$here/shim" -I"$root/lib/include" -o "$out" "$here/vllm_decode_bench.cu"
patchelf --replace-needed libcudart.so.13 libcudart.so.11.0 "$out"
echo "built $out (vLLM from $vllm)"

#!/usr/bin/env bash
# Runs a CUDA program under GPGPU-Sim (built by tools/gpgpusim/setup.sh): pao-cuda-check,
# pao-cuda-bench, pao-cuda-probe (with --simulator), or any CUDA 13 program linked against the shared runtime.
#
#   tools/gpgpusim/run.sh [--sms N] [--timing] [--config DIR] [--work DIR] [--log FILE] [--show REGEX]
#                         [--prefix DIR] -- PROGRAM [ARGS...]
#
#   --sms N       SMs of the modelled GPU: 80 (the V100 config as published, default) or any other
#                 count (-gpgpu_n_clusters N; 16 models a BI-V100-sized part)
#   --config DIR  a GPGPU-Sim config folder (default: the source's configs/tested-cfgs/SM7_QV100)
#   --work DIR    the folder the simulator runs in (its config, extracted PTX and temporary files;
#                 default: a new folder under PREFIX/runs)
#   --log FILE    the simulator's whole output, the program's lines among it (default:
#                 WORK/gpgpusim.log)
#   --show REGEX  the lines of it to print as they come (default: pao's own lines — PASS, FAIL,
#                 the tools' summaries; '.' prints everything)
#   --prefix DIR  what setup.sh built (default: build/gpgpusim)
#   --timing      host-to-device copies do not fill L2 (-gpgpu_perf_sim_memcpy 0): a timed launch
#                 starts with a cold L2, as pao-cuda-bench's L2 flush leaves it on a GPU
# PROGRAM pao-cuda-check / pao-cuda-bench / pao-cuda-probe means the slim binaries of PREFIX/bin.
#
# The V100 config runs Turing code (sm_75, what CUDA 13 can still emit): -gpgpu_ptx_force_max_capability
# 75 and -gpgpu_occupancy_sm_number 75 are added to it. Exit status: the program's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$root/build/gpgpusim"
sms=80
config=""
work=""
log=""
timing=0
show='^(PASS|FAIL|skip|pao-cuda|gpgpusim-repro|[0-9]+ passed|wrote |case |  [a-z0-9_]+\.|  note|decode-|prefix-|(clock|occupancy|fma|mma|issue|dram|l2|latency|launch) +(\.\.\.|done|skipped)|  [A-Za-z0-9])'
die() { echo "tools/gpgpusim/run.sh: error: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sms) sms="${2:?}"; shift 2 ;;
    --config) config="${2:?}"; shift 2 ;;
    --work) work="${2:?}"; shift 2 ;;
    --log) log="${2:?}"; shift 2 ;;
    --prefix) prefix="${2:?}"; shift 2 ;;
    --timing) timing=1; shift ;;
    --show) show="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help; the program comes after --)" ;;
  esac
done
[[ $# -ge 1 ]] || die "no program given (see --help)"
[[ "$sms" =~ ^[1-9][0-9]*$ ]] || die "--sms $sms: expected a positive integer"
prefix="$(cd "$prefix" 2>/dev/null && pwd)" || die "no set-up at $prefix: run tools/gpgpusim/setup.sh first"
[[ -f "$prefix/simlib.path" ]] || die "$prefix has no simulator build: run tools/gpgpusim/setup.sh --source DIR"
simlib="$(cat "$prefix/simlib.path")"
shim="$prefix/lib/libpao_gpgpusim_shim.so"
[[ -f "$shim" ]] || die "no launch shim at $shim: run tools/gpgpusim/setup.sh"
[[ -n "$config" ]] || config="$prefix/src/configs/tested-cfgs/SM7_QV100"
[[ -f "$config/gpgpusim.config" ]] || die "--config $config has no gpgpusim.config"

program="$1"; shift
case "$program" in
  pao-cuda-check|pao-cuda-bench|pao-cuda-probe|gpgpusim-repro) program="$prefix/bin/$program" ;;
esac
[[ -x "$program" ]] || die "program $program not found (setup.sh builds pao-cuda-check, pao-cuda-bench, pao-cuda-probe and gpgpusim-repro)"
program="$(cd "$(dirname "$program")" && pwd)/$(basename "$program")"

if [[ -z "$work" ]]; then
  mkdir -p "$prefix/runs"
  work="$(mktemp -d "$prefix/runs/run-XXXXXX")"
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
cp "$config"/*.icnt "$work/" 2>/dev/null || true
{
  cat "$config/gpgpusim.config"
  echo
  echo "# added by tools/gpgpusim/run.sh: Turing (sm_75) code on this timing model; $sms SMs"
  echo "-gpgpu_ptx_force_max_capability 75"
  echo "-gpgpu_occupancy_sm_number 75"
  echo "-gpgpu_compute_capability_major 7"
  echo "-gpgpu_compute_capability_minor 5"
  echo "-gpgpu_n_clusters $sms"
  [[ $timing -eq 1 ]] && echo "-gpgpu_perf_sim_memcpy 0"
  true
} > "$work/gpgpusim.config"
[[ -n "$log" ]] || log="$work/gpgpusim.log"

export CUDA_INSTALL_PATH="$prefix/cuda"
export PTXAS_CUDA_INSTALL_PATH="$prefix/cuda"
export LD_LIBRARY_PATH="$simlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_PRELOAD="$shim"
# What GPGPU-Sim's setup_environment sets for CUDA >= 6: the PTX is extracted file by file
# (cuobjdump -lptx / -xptx); without CUOBJDUMP_SIM_FILE the simulator looks for sections of the
# old whole-binary dump and aborts with "No PTX sections found".
export PTX_SIM_USE_PTX_FILE=1.ptx PTX_SIM_KERNELFILE=_1.ptx CUOBJDUMP_SIM_FILE=jj
export PAO_DATA_DIR="${PAO_DATA_DIR:-$root/data}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

cd "$work"
set +e
"$program" "$@" 2>&1 | tee "$log" | grep --line-buffered -E "$show"
status=${PIPESTATUS[0]}
exit "$status"

#!/usr/bin/env bash
# Builds GPGPU-Sim and slim pao CUDA binaries for it, all under an ignored folder
# (default build/gpgpusim). Not part of CI: see docs/gpgpusim.md.
#
#   tools/gpgpusim/setup.sh --source DIR [--prefix DIR] [--jobs N] [--skip-sim] [--skip-pao]
#
# DIR is a checkout of https://github.com/accel-sim/gpgpu-sim_distribution, branch dev,
# commit 667834cf (v4.2.0, Oct 2024) — the one this set-up was made and checked with.
# Steps (each skipped when its output is already there and up to date):
#   1. Debian packages the simulator's build needs (bison, flex, zlib, makedepend, patchelf, GL, patch).
#   2. A CUDA install folder for the simulator (prefix/cuda): CUDA 11.8's runtime headers and
#      libcudart from PyPI (nvidia-cuda-runtime-cu11), cuobjdump from PyPI (nvidia-cuda-cuobjdump),
#      and three small wrappers: nvcc (answers --version as 11.8: the simulator's build reads it),
#      ptxas (this machine's CUDA 13 ptxas, without the -v lines GPGPU-Sim cannot parse) and
#      cuobjdump (fixes the shuffle PTX GPGPU-Sim mis-parses; see ptx_fixups.sed).
#   3. The simulator itself, built from a copy of DIR in prefix/src (the checkout is not touched),
#      with pao's fixes (patches/*.patch) of defects that give silently wrong results.
#   4. The launch shim (launch_shim.c): CUDA 13's launch entry points mapped onto GPGPU-Sim's;
#      and the reproducers of the simulator's defects (repro/gpgpusim_repro.cu).
#   5. Slim pao CUDA binaries (prefix/pao): pao-cuda-check and pao-cuda-bench for sm_75 holding
#      only the instantiations the GPGPU-Sim suite needs (slim.cmake), and pao-cuda-probe, linked
#      against GPGPU-Sim's libcudart (patchelf), in prefix/bin.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source_dir=""
prefix="$root/build/gpgpusim"
jobs="$(nproc)"
skip_sim=0
skip_pao=0

usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "tools/gpgpusim/setup.sh: error: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --source) source_dir="${2:?--source needs a folder}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a count}"; shift 2 ;;
    --skip-sim) skip_sim=1; shift ;;
    --skip-pao) skip_pao=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
cuda="$prefix/cuda"
sim="$prefix/src"
log() { echo "== gpgpusim setup: $*"; }
# The commit of a checkout: DIR's own git HEAD, or "unknown" when DIR is not the top of a
# repository (an exported tree; or a folder inside pao's own repository, whose HEAD is not it).
repo_head() {
  local top
  top="$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" || { echo unknown; return; }
  [[ "$(cd "$top" && pwd -P)" == "$(cd "$1" && pwd -P)" ]] || { echo unknown; return; }
  git -C "$1" rev-parse HEAD
}

# --- 1. Debian packages --------------------------------------------------------------------
need_pkgs=()
for p in bison flex zlib1g-dev xutils-dev patchelf libgl-dev rsync patch; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [[ ${#need_pkgs[@]} -gt 0 ]]; then
  log "installing Debian packages: ${need_pkgs[*]}"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get install -y "${need_pkgs[@]}" >"$prefix/apt.log" 2>&1 \
    || die "apt-get install failed (log: $prefix/apt.log)"
fi
command -v nvcc >/dev/null || die "nvcc (CUDA >= 12) is needed on PATH to compile pao's kernels"
host_ptxas="$(dirname "$(command -v nvcc)")/ptxas"
[[ -x "$host_ptxas" ]] || die "no ptxas beside nvcc ($host_ptxas)"

# --- 2. The CUDA install folder the simulator builds and runs against ----------------------
runtime_wheel="nvidia-cuda-runtime-cu11==11.8.89"
cuobjdump_wheel="nvidia-cuda-cuobjdump==13.5.37"
if [[ ! -f "$cuda/.complete" ]]; then
  log "assembling $cuda from PyPI ($runtime_wheel, $cuobjdump_wheel)"
  rm -rf "$cuda" "$prefix/wheels"
  mkdir -p "$prefix/wheels" "$cuda/bin" "$cuda/lib64"
  python3 -m pip download --quiet --no-deps --dest "$prefix/wheels" \
    "$runtime_wheel" "$cuobjdump_wheel" || die "pip download failed"
  python3 - "$prefix/wheels" "$prefix/wheels/x" <<'PY'
import sys, zipfile, pathlib
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for wheel in src.glob("*.whl"):
    zipfile.ZipFile(wheel).extractall(dst)
PY
  cp -r "$prefix/wheels/x/nvidia/cuda_runtime/include" "$cuda/include"
  cp "$prefix/wheels/x/nvidia/cuda_runtime/lib/libcudart.so.11.0" "$cuda/lib64/"
  ln -sf libcudart.so.11.0 "$cuda/lib64/libcudart.so"
  install -m 755 "$prefix/wheels/x/nvidia/cu13/bin/cuobjdump" "$cuda/bin/cuobjdump.real"
  touch "$cuda/.complete"
fi
# The wrappers, on every run (a set-up made before a wrapper changed gets the new one); each
# written aside and moved into place, so that a simulator running meanwhile never reads half of one.
install -m 755 "$here/wrappers/nvcc" "$cuda/bin/nvcc"
sed -e "s#@HOST_PTXAS@#$host_ptxas#" -e "s#@CACHE@#$prefix/ptxas-cache#" "$here/wrappers/ptxas" > "$cuda/bin/ptxas.new"
sed "s#@FIXUPS@#$here/ptx_fixups.sed#" "$here/wrappers/cuobjdump" > "$cuda/bin/cuobjdump.new"
chmod 755 "$cuda/bin/ptxas.new" "$cuda/bin/cuobjdump.new"
mv "$cuda/bin/ptxas.new" "$cuda/bin/ptxas"
mv "$cuda/bin/cuobjdump.new" "$cuda/bin/cuobjdump"

# --- 3. The simulator ------------------------------------------------------------------------
if [[ $skip_sim -eq 0 ]]; then
  [[ -n "$source_dir" ]] || [[ -f "$sim/setup_environment" ]] \
    || die "--source DIR is needed the first time (a checkout of accel-sim/gpgpu-sim_distribution)"
  if [[ -n "$source_dir" ]]; then
    [[ -f "$source_dir/setup_environment" && -d "$source_dir/src/cuda-sim" ]] \
      || die "--source $source_dir is not a GPGPU-Sim checkout (no setup_environment, src/cuda-sim)"
    commit="$(repo_head "$source_dir")"
    [[ "$commit" == 667834cf* ]] || echo "warning: GPGPU-Sim commit $commit; this set-up was checked with 667834cf" >&2
    log "copying $source_dir to $sim"
    mkdir -p "$sim"
    rsync -a --exclude /build --exclude /lib "$source_dir/" "$sim/"
  fi
  # pao's fixes of simulator defects that give silently wrong results (patches/*.patch; each is
  # shown by repro/gpgpusim_repro.cu, docs/gpgpusim.md): fma rounded twice, f16 ties rounded away,
  # barrier reductions inverted and never reset. Applied with patch(1), not git apply: under pao's
  # own repository (the default prefix) git apply skips, without a word, every path outside it.
  for patch in "$here"/patches/*.patch; do
    if patch -p1 -R --dry-run -s -f -d "$sim" <"$patch" >/dev/null 2>&1; then
      continue  # already applied
    fi
    log "applying $(basename "$patch")"
    patch -p1 --forward -s -d "$sim" <"$patch" || die "$(basename "$patch") does not apply to $sim (another GPGPU-Sim commit?)"
  done
  # CUDA 12/13 programs ask for the libcudart.so.12/13 symbol versions.
  for v in 12 13; do
    grep -q "libcudart.so.$v{" "$sim/linux-so-version.txt" \
      || printf 'libcudart.so.%s{\n};\n' "$v" >> "$sim/linux-so-version.txt"
  done
  log "building GPGPU-Sim with $jobs jobs (about 25 min on 2 cores the first time; log: $prefix/sim-build.log)"
  (
    cd "$sim"
    export CUDA_INSTALL_PATH="$cuda"
    set +eu
    # shellcheck disable=SC1091
    source setup_environment release >/dev/null || exit 1
    set -eu
    make -j"$jobs" >"$prefix/sim-build.log" 2>&1
  ) || die "the GPGPU-Sim build failed (last lines of $prefix/sim-build.log:
$(tail -n 15 "$prefix/sim-build.log"))"
  libdir="$(find "$sim/lib" -name libcudart.so -path '*release*' | head -1)"
  [[ -n "$libdir" ]] || die "the build left no libcudart.so under $sim/lib"
  echo "$(dirname "$libdir")" > "$prefix/simlib.path"
  repo_head "$sim" > "$prefix/sim-commit.txt"
  log "simulator: $(cat "$prefix/simlib.path") (commit $(cut -c1-8 "$prefix/sim-commit.txt"))"
fi

# --- 4. The launch shim ----------------------------------------------------------------------
mkdir -p "$prefix/lib"
if [[ ! "$prefix/lib/libpao_gpgpusim_shim.so" -nt "$here/launch_shim.c" ]]; then
  log "building the launch shim"
  gcc -O2 -shared -fPIC -I"$(dirname "$(command -v nvcc)")/../include" -o "$prefix/lib/libpao_gpgpusim_shim.so" \
    "$here/launch_shim.c" -ldl
fi

mkdir -p "$prefix/bin"
if [[ ! "$prefix/bin/gpgpusim-repro" -nt "$here/repro/gpgpusim_repro.cu" ]]; then
  log "building the reproducers of the simulator's defects"
  nvcc -arch=sm_75 --cudart shared -o "$prefix/bin/gpgpusim-repro" "$here/repro/gpgpusim_repro.cu" \
    || die "nvcc failed on repro/gpgpusim_repro.cu"
  patchelf --replace-needed libcudart.so.13 libcudart.so.11.0 "$prefix/bin/gpgpusim-repro"
fi

# --- 5. Slim pao CUDA binaries ---------------------------------------------------------------
if [[ $skip_pao -eq 0 ]]; then
  log "building slim pao CUDA binaries for sm_75 (log: $prefix/pao-build.log)"
  cmake -S "$root" -B "$prefix/pao" -G Ninja -C "$here/slim.cmake" >"$prefix/pao-build.log" 2>&1 \
    || die "cmake failed (log: $prefix/pao-build.log)"
  cmake --build "$prefix/pao" -j"$jobs" --target pao_cuda_check pao_cuda_bench pao_cuda_probe \
    >>"$prefix/pao-build.log" 2>&1 || die "the pao build failed (last lines of $prefix/pao-build.log:
$(tail -n 15 "$prefix/pao-build.log"))"
  for exe in pao-cuda-check pao-cuda-bench pao-cuda-probe; do
    built="$prefix/pao/cuda/$exe"
    [[ -x "$built" ]] || die "no $exe in $prefix/pao/cuda"
    cp "$built" "$prefix/bin/$exe"
    patchelf --replace-needed libcudart.so.13 libcudart.so.11.0 "$prefix/bin/$exe"
  done
fi
log "done. Run a binary under the simulator with tools/gpgpusim/run.sh (see --help)"

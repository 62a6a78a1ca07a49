#!/usr/bin/env bash
# Installs pao's build dependencies from Debian packages when any is missing (you are root on
# the project's machines; elsewhere run it with sudo). Idempotent and quiet when all is present.
set -euo pipefail
packages=(cmake ninja-build ccache g++ clang clang-format libclang-rt-dev libeigen3-dev doctest-dev nlohmann-json3-dev
          libcli11-dev libomp-dev python3 python3-venv python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pao: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Python packages of the interop tests (PyPI): the official safetensors reader, numpy,
# ml_dtypes (bf16/fp8 dtypes for numpy) and pytest. When the python3 on PATH lacks them, they go
# into a virtual environment at .venv (Debian's own python3 refuses system-wide pip installs),
# which tests/python/CMakeLists.txt prefers. Without network access this step only warns: the
# build and the C++ tests do not need Python, and CMake says which tests it left out.
# The Python package (pip install ., docs/python.md) builds with nanobind and scikit-build-core
# and its tests use torch (CPU; PyPI's wheel, about 3 GB with its CUDA libraries on the first
# run, from pip's cache after that).
modules="safetensors numpy ml_dtypes pytest nanobind scikit_build_core torch"
if ! python3 -c "import ${modules// /, }" 2>/dev/null &&
   ! { [ -x .venv/bin/python3 ] && .venv/bin/python3 -c "import ${modules// /, }" 2>/dev/null; }; then
  echo "pao: installing $modules (pip, into .venv)"
  if ! { python3 -m venv .venv && .venv/bin/python3 -m pip install -q ${modules//_/-}; }; then
    echo "pao: warning: could not install $modules; the Python interop tests will not run" >&2
  fi
fi

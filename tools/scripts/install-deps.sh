#!/usr/bin/env bash
# Installs pao's build dependencies from Debian packages when any is missing (you are root on
# the project's machines; elsewhere run it with sudo). Idempotent and quiet when all is present.
set -euo pipefail
packages=(cmake ninja-build g++ clang libclang-rt-14-dev libeigen3-dev doctest-dev nlohmann-json3-dev
          libcli11-dev libomp-dev)
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
# ml_dtypes (bf16/fp8 dtypes for numpy) and pytest.
if ! python3 -c "import safetensors, numpy, ml_dtypes, pytest" 2>/dev/null; then
  echo "pao: installing safetensors numpy ml_dtypes pytest (pip)"
  python3 -m pip install -q safetensors numpy ml_dtypes pytest
fi

#!/usr/bin/env bash
# The main job of README.md: installs dependencies, builds pao and runs it on the embedded
# defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target pao_cli
build/release/tools/pao example

#!/usr/bin/env bash
# The CUDA tools' command lines where no GPU is (issue #37): pao-cuda (the three tools in one binary,
# what a lent GPU is sent) dispatches by subcommand and by the name it is called through; pao-cuda-probe
# refuses bad usage with exit 2 before it looks for a device, and without one says so and exits 77
# having written nothing. Usage: cuda_tools.sh PAO (the CUDA tools, when built, beside it in ../cuda;
# without them there is nothing to check and the script says so).
. "$(dirname "$0")/lib/checks.bash" "$1"
cuda=$(cd "$(dirname "$pao")/../cuda" 2>/dev/null && pwd)
if [ -z "$cuda" ] || [ ! -x "$cuda/pao-cuda" ]; then
  echo "cuda_tools.sh: no CUDA tools built beside $pao: nothing to check"
  finish
fi
multi=$cuda/pao-cuda
probe=$cuda/pao-cuda-probe

expect_tool 0 "$multi" --help
says stdout "probe"
expect_tool 2 "$multi"
says stderr "usage: pao-cuda"
expect_tool 2 "$multi" frob
says stderr "unknown tool 'frob'"
expect_tool 0 "$multi" probe --help
says stdout "dram_achievable_gbps"
# Called through a link named after a tool, it is that tool.
ln -s "$multi" "$tmp/pao-cuda-probe"
expect_tool 0 "$tmp/pao-cuda-probe" --help
says stdout "Measures a device descriptor"

expect_tool 0 "$probe" --help
expect_tool 2 "$probe" --skip frob
expect_tool 2 "$probe" --base no-such-device
says stderr "unknown device 'no-such-device'"
expect_tool 2 "$probe" --out "$tmp/no/such/folder/probe.json"
says stderr "--out"
# No GPU on this machine: skipped (77), nothing written. On a machine with one this check is moot.
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  expect_tool 77 "$probe" --out "$tmp/probe.json"
  says stdout "no usable CUDA device"
  check "nothing is written without a device" test ! -e "$tmp/probe.json"
fi
finish

#!/usr/bin/env bash
# tools/gpu/run.sh, the prepared GPU run (issue #37), made dry on this machine: every stage ends and
# says why it skipped, the summary is written, a stage cut by the deadline keeps what it wrote, and
# bad arguments are refused. Usage: gpu_run.sh PAO (the CUDA tools, when built, beside it in ../cuda)
. "$(dirname "$0")/lib/checks.bash" "$1"
run=$(cd "$(dirname "$0")/../../tools/gpu" && pwd)/run.sh
cuda=$(cd "$(dirname "$pao")/../cuda" 2>/dev/null && pwd)

# The dry run: no CUDA device here (or no CUDA tools built), every stage skipped in seconds.
expect_tool 0 "$run" --out "$tmp/dry" --bin "${cuda:-$tmp/none}" --deadline-s 120
check "the summary is written" test -s "$tmp/dry/summary.txt"
for stage in facts check-smoke check-edges check-integer check-gpgpusim check-instances check-vllm \
  probe bench-vllm-shapes cuda-vs-vllm bench-gpu bench-loop bench-prefix sim-validate torch-cuda; do
  check "the summary has a line for $stage" grep -q "^$stage " "$tmp/dry/summary.txt"
done
check "every device stage says why it skipped" \
  sh -c "! grep -E '^(check-|bench-|probe )' '$tmp/dry/summary.txt' | grep -vE 'no CUDA device|not built'"

# A spent deadline: nothing runs, each stage says so.
expect_tool 0 "$run" --out "$tmp/spent" --bin "$tmp/none" --deadline-s 0
says stderr "the deadline is spent"

# A stage cut by what is left of the deadline keeps the row its tool wrote before it was stopped:
# a stand-in bench that writes a row, flushes it and then hangs.
mkdir -p "$tmp/fake"
printf '#!/bin/sh\nexit 77\n' >"$tmp/fake/pao-cuda-check"
cat >"$tmp/fake/pao-cuda-bench" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
echo "kernel,time_us" >"$out"; echo "v1,12.5" >>"$out"
exec sleep 100
SH
chmod +x "$tmp/fake/pao-cuda-check" "$tmp/fake/pao-cuda-bench"
expect_tool 0 "$run" --out "$tmp/cut" --bin "$tmp/fake" --deadline-s 7
check "the cut stage is marked cut" grep -q "^bench-vllm-shapes  *cut " "$tmp/cut/summary.txt"
check "its row is kept" grep -q "v1,12.5" "$tmp/cut/bench-gpu.csv"
check "the stages after it find the deadline spent" grep -q "^bench-gpu .*the deadline is spent" "$tmp/cut/summary.txt"

expect_tool 2 "$run" --frob
expect_tool 2 "$run" --deadline-s soon
expect_tool 0 "$run" --help
finish

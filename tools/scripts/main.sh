#!/usr/bin/env bash
# The main job of README.md, on the embedded defaults in data/: installs what is missing, builds
# pao, then
#   1. writes the `smoke` golden suite (data/cases/smoke.json) to out/golden,
#   2. diffs it against itself (every tensor passes),
#   3. diffs it against a broken vendor: a kernel whose V2 writes the partials of partitions 0 and 1
#      to each other's slots (the mutation library's partials_swapped, computed for real), and
#      shows where pao locates the bug,
#   4. simulates a V1 / V2-512 / V2-1024 sweep over sequence length on the BI-V100 model.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target pao_cli
pao=build/release/tools/pao
out=out
mkdir -p "$out"

echo; echo "== 1. golden suite 'smoke' -> $out/golden =="
"$pao" golden --suite smoke --out "$out/golden"

echo; echo "== 2. pao diff: the goldens against themselves =="
"$pao" diff "$out/golden" "$out/golden" --quiet

echo; echo "== 3. pao diff: against a vendor kernel that swaps the partials of partitions 0 and 1 =="
"$pao" mutate "$out/golden" "$out/vendor-broken" --bug partials_swapped | tail -n 1
set +e
"$pao" diff "$out/golden" "$out/vendor-broken" --max-rows 3 --json "$out/diff-broken.json" > "$out/diff-broken.txt"
status=$?
set -e
grep -m 1 -B 4 -A 30 "FAIL" "$out/diff-broken.txt" || true  # the first failing case
echo "[...]"
tail -n 2 "$out/diff-broken.txt"
echo "(pao diff exit status $status: 1 = mismatches found, as planted; full report in $out/diff-broken.txt)"

echo; echo "== 4. simulated sweep on the BI-V100 model: V1 vs V2-512 vs V2-1024 =="
"$pao" sim sweep --device bi-v100 --kernels v1,v2:512,v2:1024 --num-seqs 8 --num-heads 32 --num-kv-heads 8 \
  --axis seq-len=1024:131072:x2 --csv "$out/sweep.csv" --svg "$out/sweep.svg"
echo; echo "main job done: goldens in $out/golden, reports in $out/, plot $out/sweep.svg"

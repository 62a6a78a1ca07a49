#!/usr/bin/env bash
# The exit status of every `pao` subcommand: 0 success (and --help), 1 a negative result (a
# mismatch, an unsound golden, a missed bug), 2 bad input or usage. Usage: exit_codes.sh PAO
. "$(dirname "$0")/lib/checks.bash" "$1"

cat >"$tmp/case.json" <<'JSON'
{"id": "tiny", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32,
 "seq_lens": [40, 70]}
JSON
cat >"$tmp/suite.json" <<'JSON'
{"suite": "tiny", "description": "one case", "grids": [{"name": "g", "fixed": {"num_heads": 4, "num_kv_heads": 2,
 "head_size": 32, "dtype": "f16", "partition_size": 32, "seq_lens": [40, 70]}}]}
JSON

expect 0 --help
expect 0 --version
expect 2
expect 2 frob
for cmd in example sim golden diff verify mutate audit; do
  expect 0 "$cmd" --help
  expect 2 "$cmd" --no-such-flag
done

# golden
expect 0 golden --suite smoke --list
expect 2 golden --suite no-such-suite --list
expect 2 golden --suite smoke
expect 2 golden --case "$tmp/case.json" --out /proc/pao-cannot-write-here
expect 0 golden --case "$tmp/case.json" --out "$tmp/g"

# diff
expect 0 diff "$tmp/g" "$tmp/g"
expect 2 diff "$tmp/g" "$tmp/no-such-folder"
expect 2 diff "$tmp/g" "$tmp/g" --policy nosuch:k=3
expect 0 mutate "$tmp/g" "$tmp/ok"
expect 0 diff "$tmp/g" "$tmp/ok"
expect 2 mutate "$tmp/g" "$tmp/bad" --bug typo
expect 0 mutate "$tmp/g" "$tmp/bad" --bug last_token_dropped
expect 1 diff "$tmp/g" "$tmp/bad"

# verify, and a golden damaged after writing
expect 0 verify "$tmp/g"
expect 2 verify "$tmp/no-such-folder"
cp -r "$tmp/g" "$tmp/damaged"
printf 'x' >>"$tmp/damaged/tiny.safetensors"
expect 1 verify "$tmp/damaged"
expect 2 diff "$tmp/damaged" "$tmp/ok"

# never green on nothing (issue 26): all missing, an empty selection, a folder cut short
mkdir -p "$tmp/empty"
expect 1 diff "$tmp/g" "$tmp/empty" --allow-missing
says stdout "nothing was compared, which is not a pass"
cat >"$tmp/none.json" <<'JSON'
{"suite": "none", "description": "every case excluded", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16"}, "axes": {"seq_lens": [[40], [70]]},
 "exclude": [{"num_heads": 4}]}]}
JSON
expect 2 golden --suite "$tmp/none.json" --out "$tmp/none"
cat >"$tmp/three.json" <<'JSON'
{"suite": "three", "description": "three cases", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32}, "axes": {"seq_lens": [[40], [70], [9]]}}]}
JSON
expect 0 golden --suite "$tmp/three.json" --out "$tmp/three"
# A 3-task Slurm array, emulated: two tasks done, the folder is incomplete; the third completes it.
export SLURM_ARRAY_TASK_COUNT=3
for i in 0 1; do SLURM_ARRAY_TASK_ID=$i; export SLURM_ARRAY_TASK_ID
  expect 0 golden --suite "$tmp/three.json" --shard auto --out "$tmp/sharded"; done
expect 2 verify "$tmp/sharded"
says stderr "--shard 2/3"
expect 2 diff "$tmp/sharded" "$tmp/three"
export SLURM_ARRAY_TASK_ID=2
expect 0 golden --suite "$tmp/three.json" --shard auto --out "$tmp/sharded"
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
expect 0 verify "$tmp/sharded"
expect 0 diff "$tmp/sharded" "$tmp/three"
if command -v python3 >/dev/null; then
  if python3 "$(dirname "$0")/../../tools/scripts/compare_goldens.py" "$tmp/three" "$tmp/sharded" >/dev/null; then
    echo "ok:   the 3-shard union equals the unsharded suite bit for bit"
  else echo "FAIL: the 3-shard union differs from the unsharded suite"; failures=$((failures + 1)); fi
fi
expect 2 golden --suite "$tmp/three.json" --shard auto --out "$tmp/x"
# a run killed after one case: the manifest knows the others
cp -r "$tmp/three" "$tmp/cut"
python3 -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['cases']=m['cases'][:1]; json.dump(m,open(p,'w'))" \
  "$tmp/cut/manifest.json"
expect 2 diff "$tmp/cut" "$tmp/three"
says stderr "incomplete: 2 of the 3 cases of suite '$tmp/three.json' are missing"
expect 2 verify "$tmp/cut"

# audit
expect 0 audit --suite "$tmp/suite.json" --mutations last_token_dropped,independent_kernel
expect 2 audit --suite "$tmp/suite.json" --mutations typo
expect 1 audit --suite "$tmp/suite.json" --mutations last_token_dropped --policy '*:k=1e9,local=0,distributional=0'


# usage errors read like every other error (issue 26)
expect 2 golden --case "$tmp" --out "$tmp/x"
says stderr "pao golden: error: --case: File is actually a directory"
expect 2 diff "$tmp/g" "$tmp/ok" --max-rows -1
says stderr "pao diff: error:"
# a case too large for the machine is refused before anything is allocated; the limit can be raised
cat >"$tmp/huge.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [2000000000]}
JSON
expect 2 golden --case "$tmp/huge.json" --out "$tmp/huge"
says stderr "needs about"
expect 2 golden --case "$tmp/case.json" --out "$tmp/small" --memory-limit 1M
says stderr "above the 1.0 MB that --memory-limit allows"
expect 2 golden --case "$tmp/case.json" --out "$tmp/small" --memory-limit lots
expect 0 golden --case "$tmp/case.json" --out "$tmp/small" --memory-limit 0
expect 2 sim run --kernel v2 --seq-len 2000000000
says stderr "CTAs) needs about"
expect 2 sim run --kernel v2 --seq-len 100000 --memory-limit 1K
says stderr "above the 1.0 kB that --memory-limit allows"
expect 2 sim run --num-seqs 0
says stderr "must be >= 1"
# --vllm-faithful: the metadata's window is the one the outputs computed; listed as computed as vLLM does
cat >"$tmp/win.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [40], "sliding_window": 16}
JSON
expect 0 golden --case "$tmp/win.json" --vllm-faithful --out "$tmp/faithful"
says stdout "computed as vLLM's kernels do"
# --partition-size: the id names one partition size
expect 0 golden --case "$tmp/case.json" --partition-size 64 --list
if grep -q -- "-p32-" "$tmp/stdout"; then echo "FAIL: the id names two partition sizes"; failures=$((failures + 1))
else echo "ok:   the id names one partition size"; fi
# a folder holding two suites: a damaged case's hint names its own suite, by the path it was given
expect 0 golden --suite "$tmp/suite.json" --out "$tmp/mixed"
expect 0 golden --suite "$tmp/three.json" --out "$tmp/mixed"
first=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print([c['file'] for c in m['cases'] if 'suite.json' in c.get('command','')][0])" "$tmp/mixed/manifest.json")
printf 'x' >>"$tmp/mixed/$first"
expect 2 diff "$tmp/mixed" "$tmp/mixed"
says stderr "regenerate it: pao golden --suite $tmp/suite.json --out $tmp/mixed --force"
# ... and a missing case's hint names the run that expected it (not the folder's last run)
# (a run killed before it wrote the case: neither its file nor its manifest entry)
python3 -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['cases']=[c for c in m['cases'] if c['file']!=sys.argv[2]]; json.dump(m,open(p,'w'))" "$tmp/mixed/manifest.json" "$first"
rm "$tmp/mixed/$first"
expect 2 diff "$tmp/mixed" "$tmp/mixed"
says stderr "of the 2 runs that filled it"
says stderr "Complete it with: pao golden --suite $tmp/suite.json --out $tmp/mixed"
# Ctrl-C: the line that says how to resume, exit 130
cat >"$tmp/slow.json" <<'JSON'
{"suite": "slow", "description": "long enough to interrupt", "grids": [{"name": "g", "fixed": {"num_heads": 8,
 "num_kv_heads": 2, "head_size": 128, "dtype": "f32"}, "axes": {"seq_lens": [[60000], [60001], [60002], [60003]]}}]}
JSON
"$pao" golden --suite "$tmp/slow.json" --out "$tmp/slow" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
# the manifest is written after the handler is installed and before the first case (seconds long)
for _ in $(seq 100); do [ -f "$tmp/slow/manifest.json" ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
got=$?
if [ "$got" = 130 ]; then echo "ok:   130  pao golden interrupted"; else
  echo "FAIL: pao golden interrupted exited $got, expected 130"; failures=$((failures + 1)); fi
says stderr "interrupted; the cases already written are kept: rerun the same command to resume"

# sim and example
expect 2 sim
expect 2 sim frob
expect 2 sim sweep --kernels v1
expect 2 sim run --frob
expect 2 sim run --device no-such-device
expect 2 sim run --device bi-v10
says stderr "did you mean bi-v100?"
expect 0 sim sweep --device bi-v100 --kernels v1,v2:512 --axis seq-len=1024:4096:x2
says stdout "len=swept"
# a sweep of which no point runs (V1 past the BI-V100's shared memory) answers nothing: 1, as sim run
expect 1 sim sweep --device bi-v100 --kernels v1 --axis seq-len=9000,10000 --num-seqs 1
says stdout "nothing was simulated, which is not a result"
expect 0 sim sweep --device bi-v100 --kernels v1 --axis seq-len=4000,9000 --num-seqs 1
expect 0 sim run --device bi-v100 --kernel v2 --num-seqs 1 --seq-len 1024
# measurements resolve through the data folder, from any folder; --no-logo prints no LOGO ratio
pushd "$tmp" >/dev/null
expect 0 sim validate --device a100-40gb -m data/measurements/published-vllm.csv --no-logo
popd >/dev/null
if awk '/V1\/V2 time ratio/ {t=1; next} t && NF >= 4 {print $(NF-2)}' "$tmp/stdout" | grep -q "0.000"; then
  echo "FAIL: --no-logo printed a LOGO ratio"; failures=$((failures + 1)); else echo "ok:   --no-logo prints no LOGO ratio"; fi
expect 2 sim validate --device a100-40gb -m no-such-measurements.csv
says stderr "looked in the current folder"
expect 2 example --dtype f8
says stderr "expected f32, f16 or bf16"
expect 2 example --partition-size 100

# integer KV caches: a golden round-trips (verify --recompute), bad quantisation specs are named (2)
cat >"$tmp/u8.json" <<'JSON'
{"id": "u8", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "partition_size": 32,
 "seq_lens": [40, 7], "kv_cache_dtype": "u8", "kv_layout": "hnd", "kv_quant": {"key": "by_channel", "value": "group_32"}}
JSON
expect 0 golden --case "$tmp/u8.json" --out "$tmp/gu8"
expect 0 verify "$tmp/gu8" --recompute
says stdout "recomputed: bit-identical"
expect 0 diff "$tmp/gu8" "$tmp/gu8"
sed 's/"group_32"/"group_48"/' "$tmp/u8.json" >"$tmp/bad-group.json"
expect 2 golden --case "$tmp/bad-group.json" --out "$tmp/gbad"
says stderr "group_size 48 does not divide head_size 64"
sed 's/"kv_cache_dtype": "u8"/"kv_cache_dtype": "auto"/' "$tmp/u8.json" >"$tmp/bad-cache.json"
expect 2 golden --case "$tmp/bad-cache.json" --out "$tmp/gbad"
says stderr "field 'kv_quant' applies to integer caches only"
# write_and_attend: the caches before and after round-trip too, a by_channel key requantised
expect 0 golden --suite write_and_attend --out "$tmp/gwa"
expect 0 verify "$tmp/gwa" --recompute
says stdout "recomputed: bit-identical"
expect 0 diff "$tmp/gwa" "$tmp/gwa"
sed 's/"seq_lens"/"kernel": "write_and_attend", "query_lens": [5, 7], "seq_lens"/; s/"partition_size": 32,//' "$tmp/u8.json" >"$tmp/wa-channel.json"
expect 0 golden --case "$tmp/wa-channel.json" --out "$tmp/gwach"
expect 0 verify "$tmp/gwach" --recompute
says stdout "recomputed: bit-identical"
expect 2 sim run --device bi-v100 --kernel v2 --num-seqs 1 --seq-len 1024 --kv-cache-dtype u5
says stderr "u8, i8, u4"
expect 0 sim run --device bi-v100 --kernel v2 --num-seqs 1 --seq-len 1024 --kv-cache-dtype u4

finish

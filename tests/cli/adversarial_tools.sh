#!/usr/bin/env bash
# Issue 41, the tools' rows: pao mutate on every kind (all of a kind's outputs, nothing half-written),
# never green on an audit of nothing, no output over an input (data loss), one signal policy (130),
# the system's words for a failed rename, flip_bit.py on every dtype. Each check also runs the
# legitimate path beside the refused one. Usage: adversarial_tools.sh PAO
. "$(dirname "$0")/lib/checks.bash" "$1"
scripts=$(cd "$(dirname "$0")/../../tools/scripts" && pwd)
absolute() { [ -n "$1" ] && echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bench=$(absolute "${PAO_BENCH:-}")
sim_bench=$(absolute "${PAO_SIM_BENCH:-}")
cd "$tmp" || exit 2

# A non-integer write_and_attend case (the first of the shipped suite, smaller) and a reshape_and_cache
# one: every output of the kind, bug or not, and pao diff judges them as the promise says.
cat >wa.json <<'JSON'
{"id": "wa", "kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
 "seq_lens": [1, 20, 40], "query_lens": [1, 0, 7], "seed": 11}
JSON
cat >rc.json <<'JSON'
{"id": "rc", "kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
 "seq_lens": [20], "query_lens": [8]}
JSON
expect 0 golden --case wa.json --case rc.json --out g
expect 0 mutate g ok --bug none
expect 0 diff g ok
expect 0 mutate g rounded --bug correctly_rounded
expect 0 diff g rounded
expect 0 mutate g broken --bug last_token_dropped
# a staging folder a SIGKILLed mutate left (its process gone) is removed by the next run beside it
dead=$(sh -c 'echo $$')
mkdir -p ".stale.pao-tmp-$dead-0" && touch ".stale.pao-tmp-$dead-0/wa.safetensors"
expect 0 mutate g stale
check "a dead mutate's staging folder is removed" test ! -e ".stale.pao-tmp-$dead-0"
expect 1 diff g broken
says stdout "case rc  PASS"
python3 - broken/wa.safetensors <<'PY' >stdout 2>&1
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    print(" ".join(sorted(k for k in json.loads(f.read(n)) if k != "__metadata__")))
PY
says stdout "key_cache out value_cache"
# An error midway (the second golden damaged) leaves OUT as it was: no folder, no temporary.
cp -r g damaged
head -c 500 g/wa.safetensors >damaged/wa.safetensors
expect 2 mutate damaged half --bug none
check "mutate's error leaves no OUT and no temporary" test -z "$(ls -A | grep -e '^half$' -e 'half.pao-tmp')"

# audit on nothing: a suite of reshape_and_cache cases only, a mutation that fits no case
cat >rcsuite.json <<'JSON'
{"suite": "rc", "description": "cache writes only", "grids": [{"name": "g", "fixed": {"kernel": "reshape_and_cache",
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "query_lens": [8]}, "axes": {"seq_lens": [[20], [9]]}}]}
JSON
cat >suite.json <<'JSON'
{"suite": "tiny", "description": "one case", "grids": [{"name": "g", "fixed": {"num_heads": 4, "num_kv_heads": 2,
 "head_size": 32, "dtype": "f16", "partition_size": 32, "seq_lens": [40, 70]}}]}
JSON
expect 1 audit --suite rcsuite.json
says stdout "nothing was audited, which is not a pass"
expect 1 audit --suite suite.json --mutations alibi_missing
says stdout "nothing was audited, which is not a pass"
expect 1 audit --suite suite.json --mutations alibi_missing,last_token_dropped
says stdout "alibi_missing applies to none of the 1 cases audited"
cat >none.json <<'JSON'
{"suite": "none", "description": "every case excluded", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16"}, "axes": {"seq_lens": [[40], [70]]}, "exclude": [{"num_heads": 4}]}]}
JSON
expect 2 audit --suite none.json
says stderr "selects no case"
expect 0 audit --suite suite.json --mutations last_token_dropped,independent_kernel
says stdout "every bug caught, every legitimate variation passed"

# data loss: no output over an input, in every command that writes one
cp -r g g.kept
expect 2 diff g ok --json g
says stderr "pao diff: error: --json g: that is GOLDEN"
expect 2 diff g ok --junit ./g/../g/wa.safetensors
expect 2 diff g ok --json ok/out.safetensors
says stderr "a tensor file or folder inside ok (ACTUAL)"
expect 2 diff g ok --json g/report.json
says stderr "inside the folder g (GOLDEN)"
# two outputs on one file (the second overwrote the first); a folder as a report's path
expect 2 diff g ok --json r.x --junit ./r.x
says stderr "are the same file"
mkdir -p reports
expect 2 diff g ok --json reports/
says stderr "is a folder"
expect 2 audit --suite suite.json --mutations last_token_dropped --json a.out --svg ./a.out
says stderr "are the same file"
# --scratch: a file is not a folder; folders it had to create are gone after the run
echo "not a folder" >notes.txt
expect 2 audit --suite suite.json --mutations last_token_dropped --scratch notes.txt
says stderr "--scratch notes.txt: not a folder"
expect 0 audit --suite suite.json --mutations last_token_dropped --scratch made/deep
check "the folders --scratch made are removed" test ! -e made
# a report beside the vendor's outputs (what the example harnesses write) is not over an input
expect 0 diff g ok --json ok/report.json
ln -s g link
expect 2 diff g ok --json link
check "the golden folder is untouched" diff -r g g.kept
expect 0 diff g ok --json report.json --junit report.xml
expect 2 mutate g g --bug none
expect 2 mutate g g/vendor
check "the golden folder is untouched" diff -r g g.kept
expect 2 golden --case wa.json --out wa.json
says stderr "--out wa.json: that is --case"
cp wa.json manifest.json
expect 2 golden --case manifest.json --out .
says stderr "that is --case (manifest.json)"
check "the case file is untouched" cmp -s wa.json manifest.json
expect 2 golden --suite suite.json --out suite.json
says stderr "that is --suite"
expect 2 audit --suite suite.json --mutations last_token_dropped --json suite.json
expect 2 audit --suite suite.json --mutations last_token_dropped --svg suite.json
expect 0 audit --suite suite.json --mutations last_token_dropped --json audit.json --svg audit.svg
expect 0 sim calibrate --device h200 --synthesize truth.csv
expect 2 sim calibrate --device h200 -m truth.csv --out truth.csv
says stderr "--out truth.csv: that is --measurements"
cp "$scripts/../../data/devices/h200.json" h200.json
expect 2 sim calibrate --device h200.json --synthesize h200.json
says stderr "that is --device"
expect 2 sim sweep --device h200.json --kernels v1,v2:512 --axis seq-len=1024:2048:x2 --csv h200.json
says stderr "that is --device"
expect 0 sim sweep --device h200.json --kernels v1,v2:512 --axis seq-len=1024:2048:x2 --csv sweep.csv
expect 2 sim advise --device h200.json --svg h200.json
says stderr "that is --device"

# --json DIR: refused before any work, naming the option (a rename that fails later says the
# system's words, not "Success": tests/io/test_io_atomic.cpp)
mkdir -p adir
expect 2 diff g ok --json adir
says stderr "--json adir: is a folder"

# SIGTERM (a scheduler's stop) exits 130 as Ctrl-C does, leaving no half-written file
cat >slow.json <<'JSON'
{"suite": "slow", "description": "long enough to stop", "grids": [{"name": "g", "fixed": {"num_heads": 8,
 "num_kv_heads": 2, "head_size": 128, "dtype": "f32"}, "axes": {"seq_lens": [[60000], [60001], [60002], [60003]]}}]}
JSON
"$pao" golden --suite slow.json --out slow >stdout 2>stderr &
pid=$!
for _ in $(seq 100); do [ -f slow/manifest.json ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
got=$?
check "pao golden stopped by SIGTERM exits 130 (got $got)" test "$got" = 130
says stderr "interrupted; the cases already written are kept: rerun the same command to resume"
check "no temporary left behind" test -z "$(ls -A slow | grep pao-tmp)"

# flip_bit.py on an I8 cache (and every other dtype safetensors defines): the damage is caught
cat >i8.json <<'JSON'
{"id": "i8", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32,
 "seq_lens": [40, 7], "kv_cache_dtype": "i8"}
JSON
expect 0 golden --case i8.json --out gi8
expect 0 verify gi8
if python3 "$scripts/flip_bit.py" gi8/i8.safetensors key_cache 6 --element 3 2>stderr; then
  echo "ok:   flip_bit.py flips a bit of an I8 tensor"
else
  echo "FAIL: flip_bit.py on an I8 tensor"; head -c 400 stderr; failures=$((failures + 1))
fi
expect 1 verify gi8

# Round four (an adversarial probe after the fixes above): the same classes, new instances.
cat >c1.json <<'JSON'
{"kernel":"decode","num_heads":4,"num_kv_heads":2,"head_size":64,"block_size":16,"dtype":"f16","seq_lens":[5,17,40],
 "partition_size":32,"seed":1}
JSON
cat >s1.json <<'JSON'
{"suite":"s1","description":"x","grids":[{"name":"g","fixed":{"kernel":"decode","num_heads":4,"num_kv_heads":2,
 "head_size":64,"block_size":16,"dtype":"f16","seq_lens":[5,17,40],"partition_size":32,"seed":1},"axes":{"alibi":[false]}}]}
JSON
expect 0 golden --case c1.json --out G
c1_golden=$(cd G && ls *.safetensors)
# audit --scratch: audit removes only what it wrote (its own folder inside), never a golden that was there
cp -r G Gs
expect 0 audit --suite s1.json --mutations last_token_dropped --scratch Gs
check "audit --scratch Gs leaves what Gs held untouched" diff -r G Gs
check "audit --scratch leaves nothing of its own behind" test -z "$(ls -A Gs | grep pao-)"
expect 0 audit --suite s1.json --mutations last_token_dropped --scratch new_scratch
check "a --scratch folder audit created is gone with it" test ! -e new_scratch

# no output over an input: pao sim run --trace, pao sim calibrate --synthesize, pao-bench --json
cp c1.json c1.kept
expect 2 sim run --case c1.json --trace c1.json
says stderr "pao sim: error: --trace c1.json: that is --case"
cp "$scripts/../../data/devices/h200.json" d.json
cp d.json d.kept
expect 2 sim run -d d.json --trace d.json
says stderr "--trace d.json: that is --device"
expect 2 sim run --case "G/$c1_golden" --trace G/x.json
says stderr "inside the folder G"
check "the inputs are untouched" cmp -s c1.json c1.kept
cp c1.kept c1.json
check "the device is untouched" cmp -s d.json d.kept
check "the golden folder is untouched" diff -r G Gs
expect 0 sim run -d d.json --case "G/$c1_golden" --trace trace.json
check "the trace is written" test -s trace.json
expect 2 sim run --case c1.json --trace adir
says stderr "--trace"
expect 0 sim calibrate -d h200 --synthesize m.csv
cp m.csv m.kept
expect 2 sim calibrate -d h200 -m m.csv --synthesize m.csv
says stderr "--synthesize m.csv: that is --measurements"
check "the measurements are untouched" cmp -s m.csv m.kept
if [ -n "$bench" ]; then
  expect_tool 2 "$bench" --cases none --case c1.json --json c1.json --repeats 1
  says stderr "pao-bench: error: --json c1.json: that is --case"
  check "the case is untouched" cmp -s c1.json c1.kept
  cp c1.kept c1.json
  # nothing timed is not a success; a --json that cannot be written is refused before the run
  expect_tool 2 "$bench" --cases none
  says stderr "nothing to time"
  expect_tool 2 "$bench" --cases none --case c1.json --json /nonexistent/x.json --repeats 1
  says stderr "--json /nonexistent/x.json"
  expect_tool 2 "$bench" --cases none --case c1.json --json adir --repeats 1
  says stderr "--json adir"
  expect_tool 0 "$bench" --cases none --case c1.json --json bench.json --repeats 1
  check "pao-bench --json writes its report" grep -q roofline_fraction bench.json
else
  echo "note: PAO_BENCH unset: pao-bench's checks skipped"
fi

# thread environment: a value libgomp cannot honour is refused up front, naming the variable
for v in 100000000 0 -3 abc 1.5; do
  OMP_NUM_THREADS=$v expect 2 golden --case c1.json --out go
  says stderr "pao golden: error: OMP_NUM_THREADS"
done
OMP_NUM_THREADS=2 expect 0 golden --case c1.json --out go
OMP_NUM_THREADS=100000000 expect 2 sim run --case c1.json
says stderr "OMP_NUM_THREADS"
if [ -n "$bench" ]; then
  OMP_NUM_THREADS=100000000 expect_tool 2 "$bench" --cases none --case c1.json
  says stderr "pao-bench: error: OMP_NUM_THREADS"
fi
if [ -n "$sim_bench" ]; then
  OMP_NUM_THREADS=100000000 expect_tool 2 "$sim_bench" --quick
  says stderr "pao-sim-bench: error: OMP_NUM_THREADS"
else
  echo "note: PAO_SIM_BENCH unset: pao-sim-bench's checks skipped"
fi

# Signals: every command stops with 130 on SIGINT and SIGTERM (one policy, installed for all), and
# removes its temporary folders. Job control (set -m): a background job then takes SIGINT too.
cat >mid.json <<'JSON'
{"suite": "mid", "description": "a few seconds", "grids": [{"name": "g", "fixed": {"num_heads": 8,
 "num_kv_heads": 2, "head_size": 128, "dtype": "f32"}, "axes": {"seq_lens": [[20000], [20001], [20002], [20003]]}}]}
JSON
expect 0 golden --suite mid.json --out M
expect 0 mutate M MV --bug none
pao_exe=$(readlink -f "$pao")
handles_term() {  # handles_term PID: pao runs there (exec'ed: before, the forked shell catches SIGTERM
  # to run the EXIT trap) and has its SIGTERM handler installed (bit 14 of SigCgt)
  local mask
  [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$pao_exe" ] || return 1
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && (((16#$mask >> 14) & 1))
}
stopped() {  # stopped SIGNAL WAIT_FOR ARGS...: pao ARGS stopped by SIGNAL once WAIT_FOR holds exits 130
  local sig=$1 wait_for=$2 got
  shift 2
  set -m
  "$pao" "$@" >stdout 2>stderr &
  local pid=$!
  for _ in $(seq 1000); do handles_term "$pid" && eval "$wait_for" && break; sleep 0.01; done
  kill "-$sig" "$pid"
  wait "$pid"
  got=$?
  set +m
  check "pao $* stopped by SIG$sig exits 130 (got $got)" test "$got" = 130
}
stopped TERM true diff M MV
says stderr "pao diff: interrupted"
stopped INT true diff M MV
stopped TERM true verify M --recompute
stopped TERM true sim calibrate -d h200 -m m.csv
stopped TERM true sim sweep --device h200 --kernels v1,v2:512 --axis seq-len=1024:1048576:x2 --axis num-seqs=1:256:x2
mkdir -p sc
stopped TERM 'ls -A sc | grep -q pao-tmp' audit --suite mid.json --scratch sc
check "audit's temporary folder is removed on SIGTERM" test -z "$(ls -A sc)"
stopped INT 'ls -A . | grep -q "^\.MB\.pao-tmp-" && test -n "$(ls -A .MB.pao-tmp-* 2>/dev/null)"' mutate M MB --bug last_token_dropped
check "mutate's temporary folder is removed on SIGINT" test -z "$(ls -A | grep '^\.MB\.pao-tmp')"

finish

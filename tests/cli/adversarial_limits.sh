#!/usr/bin/env bash
# Issue #41's limits, through the binaries: a case or workload too large for the memory is refused
# before anything is allocated (the field named, exit 2, never std::bad_alloc or "internal error");
# pao-bench refuses the cases it cannot time and --repeats 0; a measurement CSV with a subnormal
# time or an out-of-range integer is refused at its line and column; `pao-sim-bench --help` only
# prints help; numeric options refuse NaN, inf, negatives and zero where meaningless.
# Usage: adversarial_limits.sh PAO ($PAO_BENCH, $PAO_SIM_BENCH: the other tools, checked when set)
# The memory cases run under an address-space limit, so that a regression fails fast instead of
# filling the machine; no case here may take more than a couple of seconds.
cli_memory_limit_kb=4000000
cli_timeout_s=60
# The memory the checks count on, the same on every machine (MemAvailable differs; under a
# sanitizer no ulimit applies): what this machine has is not what these cases test.
export PAO_MEMORY_LIMIT=4G
. "$(dirname "$0")/lib/checks.bash" "$1"

# --- memory: every field that sizes an allocation, checked before allocating -----------------------
cat >"$tmp/padding.json" <<'JSON'
{"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [20],
 "query_lens": [8], "padding_tokens": 2000000000}
JSON
cat >"$tmp/num_seqs.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "num_seqs": 2000000000, "seq_lens": [17]}
JSON
cat >"$tmp/drawn.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "num_seqs": 2000000000, "max_seq_len": 17}
JSON
cat >"$tmp/columns.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "extra_table_columns": 2000000000,
 "seq_lens": [17]}
JSON
cat >"$tmp/columns_max.json" <<'JSON'
{"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "extra_table_columns": 2147483647,
 "seq_lens": [17]}
JSON
for field in padding num_seqs drawn columns columns_max; do
  expect 2 golden --case "$tmp/$field.json" --out "$tmp/g_$field"
  says stderr "of memory"
  never_says stderr "bad_alloc"
  never_says stderr "internal error"
done
expect 2 golden --case "$tmp/padding.json" --out "$tmp/g"
says stderr "padding_tokens"
expect 2 golden --case "$tmp/num_seqs.json" --out "$tmp/g"
says stderr "num_seqs"
expect 2 golden --case "$tmp/columns.json" --out "$tmp/g"
says stderr "extra_table_columns"
# the other commands that parse cases or build their tensors
expect 2 sim run --case "$tmp/num_seqs.json"
says stderr "num_seqs"
expect 2 sim run --num-seqs 2000000000 --seq-len 1
says stderr "--num-seqs"
says stderr "of memory"
never_says stderr "bad_alloc"
expect 2 sim sweep --kernels v1 --axis num-seqs=2000000000 --seq-len 1
says stderr "num-seqs"
expect 2 sim advise --num-seqs 2000000000 --max-seq-lens 1 --num-heads 8
says stderr "--num-seqs"
# the prefix plan: its grid sized by max_query_len, its K tiles by context_tile (round two)
cat >"$tmp/max_query.json" <<'JSON'
{"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "dtype": "f16", "seq_lens": [20],
 "query_lens": [8], "max_query_len": 2000000000}
JSON
expect 2 golden --case "$tmp/max_query.json" --out "$tmp/gq" --memory-limit 1G
says stderr "sized by its field 'max_query_len'"
never_says stderr "bad_alloc"
expect 2 sim run -k prefix --context-tile 1 --seq-len 2000000000 --query-len 1000 --num-seqs 1000
says stderr "of memory"
expect 0 sim run -k prefix --seq-len 4096 --query-len 512 --num-seqs 2

# --- numeric options: NaN, inf, negative, zero where meaningless ------------------------------------
for v in nan inf -1 0; do
  expect 2 sim run --num-seqs "$v"
  says stderr "--num-seqs"
  expect 2 sim run --kernel v2 --partition-size "$v"
  says stderr "--partition-size"
done
for v in nan -1 1 inf; do
  expect 2 sim calibrate -d h200 -m data/measurements/h200-vllm.csv --holdout "$v"
  says stderr "--holdout"
  expect 2 sim validate -d h200 -m data/measurements/h200-vllm.csv --no-logo --margin "$v"
  says stderr "--margin"
done
for v in nan -1 inf; do
  expect 2 sim calibrate -d h200 --synthesize "$tmp/synthetic.csv" --noise "$v"
  says stderr "--noise"
done
[ -e "$tmp/synthetic.csv" ] && {
  echo "FAIL: a refused --noise wrote the CSV"
  failures=$((failures + 1))
}
expect 2 sim run --trace-max-ctas -1 --trace "$tmp/trace.json"
says stderr "--trace-max-ctas"
expect 2 sim run --regs nan
says stderr "--regs"
expect 2 sim run --seq-len -1
says stderr "--seq-len"
for axis in seq-len=nan seq-len=-5,10 seq-len=1.5 num-heads=0 num_sms=nan num_sms=-1 seq-len=1:inf:+1; do
  expect 2 sim sweep --kernels v1 --axis "$axis"
  says stderr "axis"
done
expect 2 sim sweep --kernels v1 --axis seq-len=1024 --jobs -1
says stderr "--jobs"
expect 2 sim advise --num-seqs 0
says stderr "--num-seqs"
expect 2 sim advise --max-seq-lens -3
says stderr "--max-seq-lens"
expect 2 sim advise --jobs -1
says stderr "--jobs"
expect 2 sim advise --head-size nan
says stderr "--head-size"
expect 2 example --seed -1
says stderr "--seed"
for policy in 'out:k=nan' 'out:atol=-1' 'out:rtol=inf' 'out:floor=nan'; do
  expect 2 diff "$tmp/g" "$tmp/g" --policy "$policy"
  says stderr "--policy"
done

# --- sim measurement CSVs: values refused at their line and column ----------------------------------
header="kernel,num_seqs,num_heads,head_size,seq_len,time_us"
printf '%s\nv1,1,32,128,1024,1e-320\nv1,2,32,128,1024,20\n' "$header" >"$tmp/subnormal.csv"
printf '%s\nv1,1,32,128,2000000000,100\nv1,2,32,128,1024,20\n' "$header" >"$tmp/long.csv"
printf '%s\nv1,1,32,128,3000000000,100\n' "$header" >"$tmp/huge.csv"
printf '%s\nv1,1,32,128,1024,0\n' "$header" >"$tmp/zero.csv"
printf '%s\nv1,1,0,128,1024,10\n' "$header" >"$tmp/heads.csv"
printf '%s,num_kv_heads\nv1,1000000,65536,32,1,10,1\n' "$header" >"$tmp/ctas.csv"
for cmd in "validate --no-logo" calibrate; do
  # shellcheck disable=SC2086 # the subcommand and its flag
  expect 2 sim $cmd -d h200 -m "$tmp/subnormal.csv"
  says stderr "subnormal.csv:2: time_us"
  never_says stdout "MAPE inf"
  never_says stdout "nan"
done
expect 2 sim validate -d h200 -m "$tmp/zero.csv" --no-logo
says stderr "zero.csv:2: time_us"
expect 2 sim validate -d h200 -m "$tmp/huge.csv" --no-logo
says stderr "huge.csv:2: seq_len = 3000000000: out of range"
expect 2 sim validate -d h200 -m "$tmp/heads.csv" --no-logo
says stderr "heads.csv:2: num_heads = 0: out of range"
expect 2 sim validate -d h200 -m "$tmp/ctas.csv" --no-logo
says stderr "ctas.csv:2"
says stderr "CTAs"
expect 2 sim validate -d h200 -m "$tmp/long.csv" --no-logo
says stderr "long.csv:2: seq_len = 2000000000"
says stderr "K/V cache"
never_says stderr "is not an integer"
never_says stdout "MAPE inf"

# a row its kernel refuses (partition 100 over blocks of 16), among others: calibrate simulates the
# rows on threads and aborted (134); every command names the row
printf '%s,block_size\nv1,1,8,128,256,14.5,16\nv2:100,2,8,128,256,14.5,16\n' "$header" >"$tmp/refused.csv"
for n in 4 8 16 32 64; do printf 'v1,%s,8,128,256,20,16\n' "$n" >>"$tmp/refused.csv"; done
for cmd in "validate --no-logo" validate calibrate; do
  # shellcheck disable=SC2086 # the subcommand and its flag
  expect 2 sim $cmd -d h200 -m "$tmp/refused.csv"
  says stderr "the row at line 3 (v2-100"
done
printf '%s\nv9,1,32,128,1024,10\n' "$header" >"$tmp/kernel.csv"
expect 2 sim validate -d h200 -m "$tmp/kernel.csv" --no-logo
says stderr "kernel.csv:2: kernel: unknown kernel 'v9'"

# --- messages: an option's 100000-character value makes a short line --------------------------------
long=$(printf 'A%.0s' $(seq 1 100000))
for args in "sim run --set num_sms=$long" "diff $tmp/g $tmp/g --policy $long:k=1" "golden --suite $long --list" \
  "sim sweep --axis $long=1,2" "example --dtype $long"; do
  # shellcheck disable=SC2086 # the words of each command
  expect 2 $args
  short_lines stderr
done

# --- nothing simulated is not a result; two outputs on one path --------------------------------------
expect 1 sim advise --max-seq-lens 100000000 --num-seqs 1 --num-heads 8 --rule-json "$tmp/rule.json"
says stdout "nothing was simulated, which is not a result"
check "the rule advises no kernel where none fits" grep -q '"kernel": null' "$tmp/rule.json"
expect 0 sim advise --max-seq-lens 1024 --num-seqs 1 --num-heads 8 --rule-json "$tmp/rule.json"
expect 2 sim sweep --axis seq-len=512,1024 --csv "$tmp/s.csv" --svg "$tmp/./s.csv"
says stderr "are the same file"
expect 2 sim advise --max-seq-lens 512 --num-seqs 1 --num-heads 8 --svg "$tmp/a.json" --rule-json "$tmp/a.json"
expect 0 sim sweep --axis seq-len=512,1024 --csv "$tmp/s.csv" --svg "$tmp/s.svg"

# --- round three, second probe: crashes, parallel errors, lenient numbers -------------------------
# V1's geometry at a block of 1024 (more V lanes per row than a warp): SIGFPE (136) in every command
for args in "sim run --block-size 1024 --num-seqs 1 --seq-len 16" \
  "sim advise --block-size 4096 --num-seqs 1 --num-heads 8 --max-seq-lens 512"; do
  # shellcheck disable=SC2086 # the words of each command
  expect 2 $args
  says stderr "NUM_V_VECS_PER_ROW <= WARP_SIZE"
done
expect 0 sim sweep --axis block-size=16,4096 --num-seqs 1 --seq-len 16 --kernels v1
says stdout "1 points do not run"
# a refusal inside advise's parallel cells (abort 134): the cell is n/a and its reason printed,
# every cell refused is bad input
expect 2 sim advise --threads 100000 --num-seqs 1 --num-heads 8 --max-seq-lens 512
says stderr "every run was refused"
expect 0 sim advise --partitions 1,512 --num-seqs 64 --num-heads 64 --max-seq-lens 512,2000000000
says stdout "runs refused (shown n/a)"
# CSV numbers are decimal and whole: a NUL byte, hex, an unnamed column in the middle
printf '%s\nv1,1,8\000,128,256,14.5\n' "$header" >"$tmp/nul.csv"
printf '%s\nv1,1,8,128,256,0x10\n' "$header" >"$tmp/hex.csv"
printf 'kernel,,num_seqs,num_heads,head_size,seq_len,time_us\nv1,x,1,8,128,256,14.5\n' >"$tmp/unnamed.csv"
printf '%s\n"v1\n",1,8,128,256,14.5\n' "$header" >"$tmp/newline.csv"
for f in nul hex unnamed; do
  expect 2 sim validate -d h200 -m "$tmp/$f.csv" --no-logo
done
expect 2 sim validate -d h200 -m "$tmp/newline.csv" --no-logo
check "a quoted line break in a value stays on the error's line" test "$(wc -l <"$tmp/stderr")" -eq 1
expect 1 sim calibrate --synthesize "$tmp/none.csv" --set max_threads_per_cta=64
check "no CSV of nothing is written" test ! -e "$tmp/none.csv"
expect 2 sim run --trace-max-ctas 1e15 --trace "$tmp/t.json"
expect 0 sim run --trace-max-ctas 999999999999 --trace "$tmp/t.json" --num-seqs 1 --seq-len 64
mkdir -p "$tmp/sub"
expect 2 sim sweep --axis seq-len=100,200 --csv "$tmp/sub/"
says stderr "--csv"
check "no temporary is left in the folder" test -z "$(ls -A "$tmp/sub")"

# --- pao-bench ------------------------------------------------------------------------------------
if [ -n "${PAO_BENCH:-}" ]; then
  cat >"$tmp/reshape.json" <<'JSON'
{"kernel": "reshape_and_cache", "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "seq_lens": [20],
 "query_lens": [8]}
JSON
  cat >"$tmp/fused.json" <<'JSON'
{"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
 "seq_lens": [20], "query_lens": [8], "kv_layout": "nhd"}
JSON
  for kind in reshape fused; do
    expect_tool 2 "$PAO_BENCH" --cases none --case "$tmp/$kind.json"
    says stderr "pao-bench: error:"
  done
  says stderr "write_and_attend"
  expect_tool 2 "$PAO_BENCH" --cases none --case "$tmp/reshape.json"
  says stderr "reshape_and_cache"
  for v in 0 -1 nan; do
    expect_tool 2 "$PAO_BENCH" --cases none --repeats "$v"
    says stderr "--repeats"
  done
  expect_tool 2 "$PAO_BENCH" --cases none --case "$tmp/num_seqs.json"
  says stderr "num_seqs"
  expect_tool 2 "$PAO_BENCH" --cases none --case "$tmp/columns.json"
  says stderr "extra_table_columns"
  expect_tool 2 "$PAO_BENCH" --frob
  expect_tool 0 "$PAO_BENCH" --help
else
  echo "note: PAO_BENCH is not set (pao-bench not built): its checks are skipped"
fi

# --- pao-sim-bench --------------------------------------------------------------------------------
if [ -n "${PAO_SIM_BENCH:-}" ]; then
  expect_tool 0 "$PAO_SIM_BENCH" --help
  says stdout "--quick"
  never_says stdout "engine speed"
  expect_tool 2 "$PAO_SIM_BENCH" --frob
else
  echo "note: PAO_SIM_BENCH is not set (pao-sim-bench not built): its checks are skipped"
fi

finish

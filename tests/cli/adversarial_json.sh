#!/usr/bin/env bash
# Hostile JSON (issue 41, "deep JSON"): a value nested 100000 deep in a case id, in kv_quant, in a
# suite grid and in a golden's `case` metadata; a 2M-entry k_head_scales; a million-shard merge.
# Every reader refuses with exit 2, `pao <command>: error:` and a short stderr (it crashed with
# exit 139, or printed megabytes). Usage: adversarial_json.sh PAO  (PAO_BENCH: pao-bench, if built)
. "$(dirname "$0")/lib/checks.bash" "$1"
max_stderr=2000  # bytes: an error quotes at most ~200 characters of a value

# refused CMD...: exit 2, "error:" on stderr, and a short stderr.
refused() {
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local got=$? size
  size=$(wc -c <"$tmp/stderr")
  local what="${*#"$pao "}"
  what=${what//"$tmp"/TMP}
  if [ "$got" != 2 ]; then
    echo "FAIL: $what exited $got, expected 2"
    head -c 400 "$tmp/stderr"
    failures=$((failures + 1))
  elif ! grep -q "error:" "$tmp/stderr"; then
    echo "FAIL: $what: no 'error:' on stderr"
    failures=$((failures + 1))
  elif [ "$size" -ge "$max_stderr" ]; then
    echo "FAIL: $what: stderr is $size bytes (at most $max_stderr)"
    head -c 400 "$tmp/stderr"
    echo
    failures=$((failures + 1))
  else
    echo "ok:   2  $what  ($size bytes: $(head -c 160 "$tmp/stderr" | tr '\n' ' '))"
  fi
}

# unsound CMD...: pao verify's verdict on a golden it cannot read: exit 1 ("not sound", as for a
# damaged file), the rule on stdout, no crash, short output.
unsound() {
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local got=$? size
  size=$(cat "$tmp/stdout" "$tmp/stderr" | wc -c)
  local what="${*#"$pao "}"
  what=${what//"$tmp"/TMP}
  if [ "$got" != 1 ] || ! grep -q "nests deeper than 64 levels" "$tmp/stdout" || [ "$size" -ge "$max_stderr" ]; then
    echo "FAIL: $what exited $got ($size bytes of output), expected 1 naming the nesting limit"
    head -c 400 "$tmp/stdout" "$tmp/stderr"
    failures=$((failures + 1))
  else
    echo "ok:   1  $what  ($size bytes: $(grep -m1 "nests" "$tmp/stdout" | head -c 160))"
  fi
}

# The case of tests/cli/exit_codes.sh with one value nested 100000 deep or 2M entries long.
deep=$(printf '%*s' 100000 '' | tr ' ' '[')$(printf '%*s' 100000 '' | tr ' ' ']')
fields='"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32, "seq_lens": [40, 70]'
echo "{\"id\": $deep, $fields}" >"$tmp/deep_id.json"
echo "{\"id\": \"q\", $fields, \"kv_cache_dtype\": \"u8\", \"kv_quant\": {\"key\": $deep}}" >"$tmp/deep_kv_quant.json"
echo "{\"suite\": \"deep\", \"grids\": [{\"name\": \"g\", \"fixed\": {$fields}, \"axes\": {\"block_size\": $deep}}]}" \
  >"$tmp/deep_suite.json"
scales=$(python3 -c "print(','.join(['1.5'] * 2000000))")
echo "{\"id\": \"s\", $fields, \"kv_cache_dtype\": \"fp8\", \"k_head_scales\": [$scales]}" >"$tmp/long_scales.json"
echo "{\"id\": \"$(printf '%*s' 100000 '' | tr ' ' 'x')/\", $fields}" >"$tmp/long_id.json"

for c in deep_id deep_kv_quant long_scales long_id; do
  refused "$pao" golden --case "$tmp/$c.json" --out "$tmp/out_$c"
  refused "$pao" sim run --case "$tmp/$c.json"
  if [ -n "${PAO_BENCH:-}" ]; then refused "$PAO_BENCH" --cases none --case "$tmp/$c.json"; fi
done
refused "$pao" golden --suite "$tmp/deep_suite.json" --out "$tmp/out_suite"
refused "$pao" golden --suite "$tmp/deep_suite.json" --list

# A golden whose `case` metadata nests 100000 deep: pao verify and pao diff read it.
echo "{\"id\": \"tiny\", $fields}" >"$tmp/case.json"
"$pao" golden --case "$tmp/case.json" --out "$tmp/g" >/dev/null 2>&1 || { echo "FAIL: pao golden"; exit 1; }
mkdir -p "$tmp/deep_golden"
python3 - "$tmp/g/tiny.safetensors" "$tmp/deep_golden/tiny.safetensors" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
depth = 100000
case = json.loads(header["__metadata__"]["case"])
case["id"] = "@"  # the case stays whole, its id nested 100000 deep
header["__metadata__"]["case"] = json.dumps(case).replace('"@"', "[" * depth + "]" * depth)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + data[8 + n:])
PY
unsound "$pao" verify "$tmp/deep_golden"
unsound "$pao" verify "$tmp/deep_golden/tiny.safetensors"
refused "$pao" diff "$tmp/deep_golden" "$tmp/g"
refused "$pao" diff "$tmp/deep_golden/tiny.safetensors" "$tmp/g/tiny.safetensors"
# ... and its npy form: meta.json nests 100000 deep
"$pao" golden --case "$tmp/case.json" --format npy --out "$tmp/gn" >/dev/null 2>&1 && {
  cp -r "$tmp/gn" "$tmp/deep_npy" && rm -f "$tmp/deep_npy/manifest.json"
  meta=$(ls -d "$tmp"/deep_npy/*/meta.json | head -n 1)
  python3 - "$meta" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
depth = 100000
open(sys.argv[1], "w").write(json.dumps(m)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}")
PY
  refused "$pao" verify "$tmp/deep_npy"
  refused "$pao" diff "$tmp/deep_npy" "$tmp/gn"
}

# A manifest nesting 100000 deep.
cp -r "$tmp/g" "$tmp/deep_manifest"
python3 -c "import sys; d=100000; open(sys.argv[1], 'w').write('{\"format\": \"pao-golden-manifest\", \"cases\": ' + '['*d + ']'*d + '}')" \
  "$tmp/deep_manifest/manifest.json"
refused "$pao" verify "$tmp/deep_manifest"
refused "$pao" diff "$tmp/deep_manifest" "$tmp/g"

# Shards 0..4 of a million over a 5-case suite: the merge names the missing shards in one short line.
cat >"$tmp/five.json" <<'JSON'
{"suite": "five", "description": "five cases", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32},
 "axes": {"seq_lens": [[40], [70], [9], [12], [33]]}}]}
JSON
for i in 0 1 2 3 4; do
  "$pao" golden --suite "$tmp/five.json" --shard "$i/1000000" --out "$tmp/sharded" >/dev/null 2>&1 ||
    { echo "FAIL: pao golden --shard $i/1000000"; failures=$((failures + 1)); }
done
refused "$pao" golden --merge-manifests "$tmp/sharded"

# A device descriptor nesting 100000 deep.
python3 -c "import sys; d=100000; open(sys.argv[1], 'w').write('{\"name\": \"d\", \"fields\": ' + '['*d + ']'*d + '}')" \
  "$tmp/deep_device.json"
refused "$pao" sim run --device "$tmp/deep_device.json"

finish

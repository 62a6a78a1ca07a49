#!/usr/bin/env bash
# Issue 41, goldens and diffs, through the binary: unknown extra tensors are ignored with a note
# whatever their dtype; a file that cannot be examined fails its case, not the run; verify checks the
# flat metadata against the case and an integer cache's codes against their dtype; a non-finite out
# is nan-inf before any variant; shards without their manifests and folders without goldens are
# never sound. Each row also shows a legitimate input passing. Usage: adversarial_golden.sh PAO
. "$(dirname "$0")/lib/checks.bash" "$1"
if ! command -v python3 >/dev/null; then
  echo "skipped: python3 edits the safetensors files"
  exit 0
fi

# st.py FILE add NAME DTYPE COUNT BYTES_EACH | meta KEY VALUE | code TENSOR VALUE | f32 TENSOR VALUE |
#       fill TENSOR HEX
cat >"$tmp/st.py" <<'PY'
import json, struct, sys
path, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(path, "rb") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    raw = f.read(n)
    data = bytearray(f.read())
header = json.loads(raw)
if cmd == "add":  # an extra tensor [COUNT] of DTYPE, every byte 1
    name, dtype, count, size = args[0], args[1], int(args[2]), int(args[3])
    header[name] = {"dtype": dtype, "shape": [count], "data_offsets": [len(data), len(data) + count * size]}
    data += bytes([1]) * (count * size)
elif cmd == "meta":
    header["__metadata__"][args[0]] = args[1]
elif cmd == "code":  # a code of the first token of sequence 0 (block_tables[0, 0]), kv head 0, dim 0
    block = struct.unpack_from("<i", data, header["block_tables"]["data_offsets"][0])[0]
    entry = header[args[0]]
    per_block = 1
    for d in entry["shape"][1:]:
        per_block *= d
    data[entry["data_offsets"][0] + block * per_block] = int(args[1])
elif cmd == "f32":  # the f32 element of TENSOR for the first token of sequence 0, kv head 0
    block = struct.unpack_from("<i", data, header["block_tables"]["data_offsets"][0])[0]
    entry = header[args[0]]
    per_block = 1
    for d in entry["shape"][1:]:
        per_block *= d
    struct.pack_into("<f", data, entry["data_offsets"][0] + 4 * block * per_block, float(args[1]))
elif cmd == "fill":  # every element of TENSOR set to the little-endian bytes HEX
    begin, end = header[args[0]]["data_offsets"]
    pattern = bytes.fromhex(args[1])
    data[begin:end] = pattern * ((end - begin) // len(pattern))
if cmd in ("add", "meta"):
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(raw)) + raw + bytes(data))
PY
st() { python3 "$tmp/st.py" "$@"; }

cat >"$tmp/case.json" <<'JSON'
{"id": "tiny", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32,
 "seq_lens": [40, 70]}
JSON
expect 0 golden --case "$tmp/case.json" --out "$tmp/g"
expect 0 mutate "$tmp/g" "$tmp/ok"
expect 0 diff "$tmp/g" "$tmp/ok"

# extra tensors: any dtype beside a correct out is ignored with a note (it failed the case for I16, BOOL)
for spec in I16:2 BOOL:1 U16:2 U64:8 F8_E8M0:1 I8:1; do
  dtype=${spec%%:*}
  mkdir -p "$tmp/extra_$dtype"
  cp "$tmp/ok/tiny.safetensors" "$tmp/extra_$dtype/"
  st "$tmp/extra_$dtype/tiny.safetensors" add extra "$dtype" 6 "${spec##*:}"
  expect 0 diff "$tmp/g" "$tmp/extra_$dtype"
  says stdout "note: ignored 'extra': not an output of a decode case"
done
# only a tensor that is read must have a dtype pao reads: an I16 out fails its case, naming it
mkdir -p "$tmp/i16out"
cp "$tmp/ok/tiny.safetensors" "$tmp/i16out/"
python3 - "$tmp/i16out/tiny.safetensors" <<'PY'
import json, struct, sys
p = sys.argv[1]
raw = open(p, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
h = json.loads(raw[8:8 + n])
h["out"]["dtype"] = "I16"
t = json.dumps(h, separators=(",", ":")).encode()
t += b" " * (-len(t) % 8)
open(p, "wb").write(struct.pack("<Q", len(t)) + t + raw[8 + n:])
PY
expect 1 diff "$tmp/g" "$tmp/i16out"
says stdout "tensor 'out': unknown dtype: safetensors dtype 'I16' is not supported"

# a file that cannot be examined (a symlink loop) fails its case; the run goes on (it aborted, exit 2)
cat >"$tmp/two.json" <<'JSON'
{"suite": "two", "description": "two cases", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32}, "axes": {"seq_lens": [[40], [9]]}}]}
JSON
expect 0 golden --suite "$tmp/two.json" --out "$tmp/two"
expect 0 mutate "$tmp/two" "$tmp/two_ok"
first=$(ls "$tmp/two_ok" | head -1)
rm "$tmp/two_ok/$first"
ln -s "$first" "$tmp/two_ok/$first"
ln -s stray.safetensors "$tmp/two_ok/stray.safetensors"
expect 1 diff "$tmp/two" "$tmp/two_ok"
says stdout "cannot read: Too many levels of symbolic links"
says stdout "cases: 1 of 2 pass, 1 fail"

# verify: the flat metadata harnesses read, edited in a golden without manifest ("1 sound", exit 0)
expect 0 verify "$tmp/g/tiny.safetensors"
for kv in "scale 0.5" "kernel prefix" "num_heads 8" "outputs out"; do
  mkdir -p "$tmp/meta"
  cp "$tmp/g/tiny.safetensors" "$tmp/meta/"
  st "$tmp/meta/tiny.safetensors" meta $kv
  expect 1 verify "$tmp/meta"
  says stdout "metadata: '${kv%% *}' is \"${kv#* }\""
done
st "$tmp/meta/tiny.safetensors" meta format_version 99
expect 1 verify "$tmp/meta"
says stdout "metadata: format_version is \"99\": this pao writes and reads version 1"
cp "$tmp/g/tiny.safetensors" "$tmp/meta/"
st "$tmp/meta/tiny.safetensors" meta pao_version 0.0.1  # which pao wrote it is not the case's
expect 0 verify "$tmp/meta"

# verify: a u4 code of 200 in a used slot (only --recompute caught it)
cat >"$tmp/u4.json" <<'JSON'
{"id": "u4", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kv_cache_dtype": "u4",
 "kv_layout": "nhd", "seq_lens": [40, 70]}
JSON
expect 0 golden --case "$tmp/u4.json" --out "$tmp/u4"
rm "$tmp/u4/manifest.json"
expect 0 verify "$tmp/u4"
st "$tmp/u4/u4.safetensors" code key_cache 15  # a u4 code (wrong, but in range: --recompute's)
expect 0 verify "$tmp/u4"
st "$tmp/u4/u4.safetensors" code key_cache 200
expect 1 verify "$tmp/u4"
says stdout "codes: 1 code(s) outside [0, 15], the range of the case's u4 cache (the first, 200, at this index)"
expect 2 diff "$tmp/u4" "$tmp/u4"
says stderr "not a sound golden"

# diagnosis: a u8 golden, out all +inf, is nan-inf (it was "matches-variant — zero points ignored")
cat >"$tmp/u8.json" <<'JSON'
{"id": "u8", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "kv_cache_dtype": "u8",
 "partition_size": 32, "seq_lens": [40, 70]}
JSON
expect 0 golden --case "$tmp/u8.json" --out "$tmp/u8"
expect 0 mutate "$tmp/u8" "$tmp/u8_ok"
expect 0 diff "$tmp/u8" "$tmp/u8_ok"
st "$tmp/u8_ok/u8.safetensors" fill out 007c
expect 1 diff "$tmp/u8" "$tmp/u8_ok"
says stdout "pattern: nan-inf"
if grep -q "matches-variant" "$tmp/stdout"; then
  echo "FAIL: an inf output named as a variant"
  failures=$((failures + 1))
fi
expect 0 mutate "$tmp/u8" "$tmp/u8_zp" --bug zero_point_ignored
expect 1 diff "$tmp/u8" "$tmp/u8_zp"
says stdout "matches-variant — the output is the oracle's with the zero points ignored"

# shards 0..4 of 1000000 over a five-case suite: 999995 shards never ran (verify said sound, exit 0)
cat >"$tmp/five.json" <<'JSON'
{"suite": "five", "description": "five cases", "grids": [{"name": "g", "fixed": {"num_heads": 4,
 "num_kv_heads": 2, "head_size": 32, "dtype": "f16", "partition_size": 32},
 "axes": {"seq_lens": [[10], [20], [30], [40], [50]]}}]}
JSON
for i in 0 1 2 3 4; do expect 0 golden --suite "$tmp/five.json" --shard "$i/1000000" --out "$tmp/million"; done
expect 2 verify "$tmp/million"
says stderr "incomplete: 999995 of its 1000000 shards have no manifest (shards 5-999999)"
says stderr "its suite has 5 cases, so shards 5 and up hold none"
short_lines stderr
expect 2 diff "$tmp/million" "$tmp/million"
expect 2 golden --merge-manifests "$tmp/million"
# 7 shards of 5 cases: the two empty shards write their manifests, and the folder is complete
for i in 0 1 2 3 4 5; do expect 0 golden --suite "$tmp/five.json" --shard "$i/7" --out "$tmp/seven"; done
expect 2 verify "$tmp/seven"  # shard 6 (no case) has not run
says stderr "1 of its 7 shards have no manifest (shards 6)"
says stderr "--shard 6/7"
expect 0 golden --suite "$tmp/five.json" --shard 6/7 --out "$tmp/seven"
expect 0 verify "$tmp/seven"
expect 0 golden --merge-manifests "$tmp/seven"
expect 0 verify "$tmp/seven"
# one empty shard alone holds none of its suite's cases
mkdir -p "$tmp/alone"
expect 0 golden --suite "$tmp/five.json" --shard 6/1000 --out "$tmp/alone"
expect 2 verify "$tmp/alone"
says stderr "incomplete: 5 of the 5 cases"

# green on nothing: a folder without a golden is never sound
mkdir -p "$tmp/empty"
expect 2 verify "$tmp/empty"
says stderr "no goldens in it"
expect 2 verify "$tmp/ok"  # a vendor's outputs: no golden among them
expect 2 verify "$tmp/ok/tiny.safetensors"
says stderr "not a pao golden"

# data loss through a golden folder's files outside it: a manifest "file" with "..", an absolute
# path or a symbolic link leading out of the folder is bad input for every reader (verify called
# such a folder sound; diff --json and mutate wrote over the golden it led to)
mkdir -p "$tmp/gx" "$tmp/dotdot" "$tmp/abs" "$tmp/linked"
cp "$tmp/g/tiny.safetensors" "$tmp/gx/"
sed 's#"file": "tiny.safetensors"#"file": "../gx/tiny.safetensors"#' "$tmp/g/manifest.json" >"$tmp/dotdot/manifest.json"
sed "s#\"file\": \"tiny.safetensors\"#\"file\": \"$tmp/gx/tiny.safetensors\"#" "$tmp/g/manifest.json" >"$tmp/abs/manifest.json"
cp "$tmp/g/manifest.json" "$tmp/linked/"
ln -s ../gx/tiny.safetensors "$tmp/linked/tiny.safetensors"
for bad in dotdot abs linked; do
  expect 2 verify "$tmp/$bad"
  says stderr "leads outside the folder"
  expect 2 diff "$tmp/$bad" "$tmp/ok" --json "$tmp/gx/tiny.safetensors"
  expect 2 mutate "$tmp/$bad" "$tmp/gx" --bug last_token_dropped
  check "the golden $bad led to is intact" cmp -s "$tmp/g/tiny.safetensors" "$tmp/gx/tiny.safetensors"
done
check "mutate left no OUT for a refused folder" test ! -e "$tmp/gx/.gx.pao-tmp-*"
# a golden folder without manifest may hold a link out of it, but no output may be the file it reads
mkdir -p "$tmp/nomanifest"
ln -s ../gx/tiny.safetensors "$tmp/nomanifest/tiny.safetensors"
expect 2 diff "$tmp/nomanifest" "$tmp/ok" --json "$tmp/gx/tiny.safetensors"
says stderr "that is a golden file of GOLDEN"
expect 2 diff "$tmp/nomanifest" "$tmp/ok" --junit "$tmp/gx/tiny.safetensors"
expect 2 mutate "$tmp/nomanifest" "$tmp/gx"
says stderr "that is a golden file of GOLDEN"
check "the golden the link led to is intact" cmp -s "$tmp/g/tiny.safetensors" "$tmp/gx/tiny.safetensors"
# the legitimate paths: a normal folder, a report and vendor files beside it
expect 0 verify "$tmp/g"
expect 0 diff "$tmp/g" "$tmp/ok" --json "$tmp/report.json" --junit "$tmp/report.xml"
expect 0 diff "$tmp/nomanifest" "$tmp/ok" --json "$tmp/report2.json"
expect 0 mutate "$tmp/nomanifest" "$tmp/ok2"
expect 0 diff "$tmp/g" "$tmp/ok2"

# verify: an integer cache's scales and zero points as pao diff checks them (verify said sound)
cat >"$tmp/q8.json" <<'JSON'
{"id": "q8", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "block_size": 16, "dtype": "f16",
 "kv_cache_dtype": "u8", "kv_layout": "nhd", "seq_lens": [5, 17, 40], "partition_size": 32, "seed": 3}
JSON
expect 0 golden --case "$tmp/q8.json" --out "$tmp/q8"
rm "$tmp/q8/manifest.json"
expect 0 verify "$tmp/q8"
expect 0 mutate "$tmp/q8" "$tmp/q8_ok"
expect 0 diff "$tmp/q8" "$tmp/q8_ok"
for edit in "value_cache_scale nan" "key_cache_scale -0.01" "value_cache_scale 0" "key_cache_scale inf" \
  "value_cache_zero_point 300" "key_cache_zero_point 3.5" "value_cache_zero_point -50"; do
  mkdir -p "$tmp/q8bad"
  cp "$tmp/q8/q8.safetensors" "$tmp/q8bad/"
  st "$tmp/q8bad/q8.safetensors" f32 $edit
  expect 1 verify "$tmp/q8bad"
  says stdout "${edit%% *}: quantisation: element"
  case $edit in
  *zero_point*) says stdout "a zero point must be an integer in u8's range [0, 255]" ;;
  *) says stdout "a scale must be finite and positive" ;;
  esac
  expect 2 diff "$tmp/q8bad" "$tmp/q8_ok"
  says stderr "not a sound golden"
done

# verify: an npy golden's meta.json, its top-level case and format_version too (verify said sound)
expect 0 golden --case "$tmp/case.json" --format npy --out "$tmp/npy"
expect 0 verify "$tmp/npy/tiny"
for edit in "j['case']['k_scale']=2.0" "j['case']['seq_lens']=[4000,4000]" "j['format_version']='99'" \
  "j['format']='other'" "j['case_id']='other'"; do
  rm -rf "$tmp/npym"
  mkdir -p "$tmp/npym"
  cp -r "$tmp/npy/tiny" "$tmp/npym/"
  python3 -c "import json,sys;p=sys.argv[1];j=json.load(open(p));$edit;json.dump(j,open(p,'w'))" \
    "$tmp/npym/tiny/meta.json"
  expect 1 verify "$tmp/npym/tiny"
  says stdout "metadata: meta.json's top-level"
done
says stdout "'case_id' is \"other\""
# a case edited in both places, whose seq_lens disagree with the tensors
rm -rf "$tmp/npym"
mkdir -p "$tmp/npym"
cp -r "$tmp/npy/tiny" "$tmp/npym/"
python3 -c "import json,sys;p=sys.argv[1];j=json.load(open(p));j['case']['seq_lens']=[4000,4000];\
c=json.loads(j['metadata']['case']);c['seq_lens']=[4000,4000];c['max_seq_len']=4000;\
j['metadata']['case']=json.dumps(c,separators=(',',':'));json.dump(j,open(p,'w'))" "$tmp/npym/tiny/meta.json"
expect 1 verify "$tmp/npym/tiny"
says stdout "seq_lens"

# green on nothing: mutate reads a golden folder as verify and diff do, and plants something or fails
mkdir -p "$tmp/nocases" "$tmp/nolist"
python3 -c "import json,sys;j=json.load(open(sys.argv[1]));j['cases']=[];json.dump(j,open(sys.argv[2],'w'))" \
  "$tmp/g/manifest.json" "$tmp/nocases/manifest.json"
python3 -c "import json,sys;j=json.load(open(sys.argv[1]));j['cases']=[];j.pop('suite_cases',None);\
json.dump(j,open(sys.argv[2],'w'))" "$tmp/g/manifest.json" "$tmp/nolist/manifest.json"
expect 2 verify "$tmp/nocases"
says stderr "incomplete"
expect 2 mutate "$tmp/nocases" "$tmp/vo"
says stderr "incomplete"
check "no OUT for an incomplete folder" test ! -e "$tmp/vo"
expect 1 mutate "$tmp/nolist" "$tmp/vo"
says stderr "nothing to mutate"
check "no OUT for a folder without cases" test ! -e "$tmp/vo"
expect 1 mutate "$tmp/g" "$tmp/vb" --bug window_plus_one
says stdout "not planted in tiny: the case has no sliding window"
says stderr "nothing planted"
check "no OUT when nothing is planted" test ! -e "$tmp/vb"
expect 0 mutate "$tmp/g" "$tmp/vb" --bug last_token_dropped
says stdout "last_token_dropped planted in 1 of 1 cases"
expect 1 diff "$tmp/g" "$tmp/vb"

finish

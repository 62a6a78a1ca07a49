#!/usr/bin/env bash
# The install, end to end: `cmake --install` of this build into a temporary prefix; its exported
# package leaks no build-only flags and its headers include only installed headers; a consumer
# project (consumer/: find_package(pao), pao::pao and pao::sim) builds against it and reruns a
# golden written by the installed `pao` bit for bit; and the prefix, moved, still finds its data
# (and its package still configures). Usage: install_consumer.sh CMAKE BUILD_DIR GENERATOR CXX [MAKE]
set -u
cmake=$1 build=$2 generator=$3 cxx=$4 make_program=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset PAO_DATA_DIR PAO_CASES_DIR  # the installed data must be found without them
fail() {
  echo "FAIL: $*"
  exit 1
}
run() {  # run LOG COMMAND...: quiet unless it fails
  local log=$1
  shift
  "$@" >"$log" 2>&1 || {
    tail -n 40 "$log"
    fail "$* exited $?"
  }
}
generator_args=(-G "$generator" -DCMAKE_CXX_COMPILER="$cxx")
[ -n "$make_program" ] && generator_args+=(-DCMAKE_MAKE_PROGRAM="$make_program")

echo "== cmake --install $build (components development, runtime)"
a=$tmp/prefixA
for component in development runtime; do
  run "$tmp/install.log" "$cmake" --install "$build" --prefix "$a" --component "$component"
done
config=$(find "$a" -name paoConfig.cmake -print -quit)
for f in bin/pao include/pao/golden/reader.hpp include/pao/sim/model/device.hpp share/pao/data/cases/smoke.json \
  share/pao/data/devices/bi-v100.json; do
  [ -e "$a/$f" ] || fail "not installed: $f"
done
[ -n "$config" ] || fail "not installed: paoConfig.cmake"
ls "$(dirname "$config")"/../../libpao.a "$(dirname "$config")"/../../libpao_sim.a >/dev/null || fail "libraries"
echo "ok:   installed bin/pao, headers, libpao.a, libpao_sim.a, ${config#"$a"/}, share/pao/data"

# Build-only flags stay in the build: pao_options (-march=native, -Werror, warnings) is not exported.
if grep -nE 'march=native|Werror|Wextra|pao_options' "$(dirname "$config")"/paoTargets*.cmake; then
  fail "the exported targets carry build-only flags"
fi
echo "ok:   the exported targets carry no -march=native, -Werror or pao_options"
missing=0
while IFS= read -r include; do
  [ -e "$a/include/$include" ] || {
    echo "an installed header includes $include, which is not installed"
    missing=1
  }
done < <(grep -rhoE '#include "pao/[^"]+"' "$a/include" | sed -E 's/#include "(.*)"/\1/' | sort -u)
[ "$missing" = 0 ] || fail "installed headers include headers that are not installed"
echo "ok:   every pao/ header an installed header includes is installed"

echo "== a golden from the installed pao, rerun by a consumer built with find_package(pao)"
cat >"$tmp/case.json" <<'JSON'
{"id": "install-fp8", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
 "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25, "partition_size": 32, "seq_lens": [40, 70]}
JSON
run "$tmp/golden.log" "$a/bin/pao" golden --case "$tmp/case.json" --out "$tmp/g"
run "$tmp/configure.log" "$cmake" -S "$here/consumer" -B "$tmp/consumer" "${generator_args[@]}" \
  -DCMAKE_PREFIX_PATH="$a" -DCMAKE_BUILD_TYPE=Release
run "$tmp/build.log" "$cmake" --build "$tmp/consumer"
"$tmp/consumer/pao_consumer" "$tmp/g/install-fp8.safetensors" >"$tmp/consumer.out" 2>&1
status=$?
cat "$tmp/consumer.out"
[ "$status" = 0 ] || fail "pao_consumer exited $status"
grep -q "case install-fp8 v1.out bit-identical (256 values); device bi-v100: 16 SMs" "$tmp/consumer.out" ||
  fail "unexpected consumer output"
echo "ok:   the consumer reran the golden bit for bit and read the installed device descriptor"

echo "== the prefix moved"
b=$tmp/prefixB
mv "$a" "$b"
# A suite only the installed copy has: listed only if the data is found inside the moved prefix
# (the source tree's data/, the last fallback, would list the suites without it).
echo '{"suite": "install-probe", "description": "only in the moved prefix", "grids": []}' \
  >"$b/share/pao/data/cases/install-probe.json"
"$b/bin/pao" golden --list-suites >"$tmp/suites.out" 2>&1 || {
  cat "$tmp/suites.out"
  fail "pao golden --list-suites exited $?"
}
grep -q "^smoke " "$tmp/suites.out" && grep -q "^install-probe " "$tmp/suites.out" || {
  cat "$tmp/suites.out"
  fail "the moved prefix's bin/pao does not list its own suites"
}
echo "ok:   $b/bin/pao golden --list-suites lists the moved prefix's suites"
run "$tmp/configure-moved.log" "$cmake" -S "$here/consumer" -B "$tmp/consumer-moved" "${generator_args[@]}" \
  -DCMAKE_PREFIX_PATH="$b"
grep -q "pao_DATA_DIR $b/share/pao/data" "$tmp/configure-moved.log" || {
  cat "$tmp/configure-moved.log"
  fail "find_package(pao) of the moved prefix does not point into it"
}
echo "ok:   find_package(pao) of the moved prefix configures, pao_DATA_DIR inside it"

#!/usr/bin/env python3
"""Plants a bug in the Q·K batch loop of pao's CUDA decode kernel and shows which instances the
emulated every-instantiation suite catches it in (issue #38, docs/cuda.md "Cut 8").

The bug: after a token's first batch of K vectors, each batch's products in reverse order (the
same products, summed in another order). The kernel source is copied to a scratch folder, edited
there, and put first on the include path of one translation unit, the emulated suites
(tests/cuda/test_cuda_emulated.cpp), compiled with the build's own command and linked into a
scratch copy of pao_tests; nothing in the checkout or the build changes. The instances suite
(data/cases/instances.json, or the one under --data) then runs, and its failures are counted by
kernel instance, beside the suite's instances (`pao golden --suite instances --full --list`) and
this script's own reading of the batch rule (qk_batch_vectors in
lib/include/pao/kernels/decode_geometry.hpp): a failure outside a multi-batch instance would be a
harness error, a multi-batch instance that passes is one the suite cannot see the bug in.

  tools/scripts/planted_qk_batch_order.py [--build build/ci] [--data DIR] [--keep DIR]

Takes about 5 minutes to compile and 8 to run on 2 cores. Exit 0 when every failure is in a
multi-batch instance, 1 otherwise.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "paged_attention_decode.cuh"
CORRECT = """          for (int i = 0; i < kQkBatch; ++i)
            if (NUM_VECS % kQkBatch == 0 || j0 + i < NUM_VECS) product(j0 + i, k[i]);"""
PLANTED = """          for (int i0 = 0; i0 < kQkBatch; ++i0) {  // planted: after the first batch, reversed
            const int i = j0 == 0 ? i0 : kQkBatch - 1 - i0;
            if (NUM_VECS % kQkBatch == 0 || j0 + i < NUM_VECS) product(j0 + i, k[i]);
          }"""
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1, "u8": 1, "i8": 1}


def qk_batches(dtype, cache, head_size, block_size, warp=32):
    """Batches of a lane's K vectors per token, read from the rule's documentation: 0 where the
    loop is unrolled instead (vectors of more than 4 elements, integer caches), 1 up to 16
    vectors, else the fewest batches of at most 128 bytes of K (at most 8 vectors over fp8)."""
    group = max(warp // block_size, 1)
    vec = max(16 // (group * ELEMENT_BYTES[dtype]), 1)
    vectors = head_size // (group * vec)
    if vec > 4 or cache in ("u8", "i8"):
        return 0
    if vectors <= 16:
        return 1
    most = 8 if cache.startswith("fp8") else 128 // (vec * ELEMENT_BYTES[cache])
    return -(-vectors // most)


ID = re.compile(r"^decode-h\d+x\d+-d(\d+)-b(\d+)-(f32|f16|bf16)-(auto|e4m3|e5m2|u8|i8)(-|$)")
CACHE_TAGS = {"e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2", "u8": "u8", "i8": "i8"}


def suite_instances(pao, env):
    """(dtype, cache, head_size, block_size) of every decode case of the instances suite, from the
    case ids `pao golden --suite instances --full --list` prints (the suite's own expansion)."""
    listed = subprocess.run([str(pao), "golden", "--suite", "instances", "--full", "--list"], env=env,
                            check=True, capture_output=True, text=True).stdout.split()
    out = set()
    for case_id in listed:
        m = ID.match(case_id)
        if m:
            dtype = m.group(3)
            out.add((dtype, CACHE_TAGS.get(m.group(4), dtype), int(m.group(1)), int(m.group(2))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/ci", help="a configured and built tree (default: build/ci)")
    ap.add_argument("--data", help="a data folder to run instead of the checkout's (PAO_DATA_DIR)")
    ap.add_argument("--keep", help="keep the scratch folder (the planted kernel, object, binary, log) here")
    args = ap.parse_args()
    build = (ROOT / args.build).resolve()
    data = Path(args.data).resolve() if args.data else ROOT / "data"
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pao-planted-"))
    scratch.mkdir(parents=True, exist_ok=True)

    shadow = scratch / "include" / "kernels"
    shutil.rmtree(shadow, ignore_errors=True)
    shutil.copytree(ROOT / "cuda" / "kernels", shadow)
    source = (shadow / KERNEL).read_text()
    if CORRECT not in source:
        sys.exit("planted_qk_batch_order.py: the batch loop's product loop changed; update CORRECT")
    (shadow / KERNEL).write_text(source.replace(CORRECT, PLANTED))

    commands = json.loads((build / "compile_commands.json").read_text())
    entry = next(e for e in commands if e["file"].endswith("tests/cuda/test_cuda_emulated.cpp"))
    obj = scratch / "test_cuda_emulated.o"
    compile_cmd = entry["command"].replace(" -I", f" -I{scratch / 'include'} -I", 1)
    compile_cmd = re.sub(r" -MD -MT \S+ -MF \S+", "", compile_cmd)
    compile_cmd = re.sub(r" -o \S+", f" -o {obj}", compile_cmd)
    print("compiling the emulated suites over the planted kernel ...", flush=True)
    subprocess.run(compile_cmd, shell=True, cwd=entry["directory"], check=True)

    link = subprocess.run(["ninja", "-C", str(build), "-t", "commands", "tests/pao_tests"], check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    binary = scratch / "pao_tests"
    link = link.replace("tests/CMakeFiles/pao_tests.dir/cuda/test_cuda_emulated.cpp.o", str(obj))
    link = link.replace("-o tests/pao_tests", f"-o {binary}")
    subprocess.run(link, shell=True, cwd=build, check=True)

    print("running the instances suite (every instantiation) ...", flush=True)
    env = dict(os.environ, PAO_DATA_DIR=str(data))
    run = subprocess.run([str(binary), "-tc=*every kernel instantiation*"], env=env, capture_output=True,
                         text=True)
    (scratch / "run.log").write_text(run.stdout + run.stderr)
    summary = [line for line in run.stdout.splitlines() if line.startswith("[doctest] assertions")]
    print(summary[-1] if summary else "no doctest summary (see run.log)")

    failures = {}
    for match in re.finditer(r"logged: (\{.*?\})\n", run.stdout):
        case = json.loads(match.group(1))
        if case.get("kernel") != "decode":
            failures[("prefix", case["id"])] = failures.get(("prefix", case["id"]), 0) + 1
            continue
        cache = case["dtype"] if case["kv_cache_dtype"] == "auto" else case["kv_cache_dtype"]
        key = (case["dtype"], cache, case["head_size"], case["block_size"])
        failures[key] = failures.get(key, 0) + 1
    multi = {i for i in suite_instances(build / "tools" / "pao", env) if qk_batches(*i) >= 2}
    outside = [k for k in failures if k not in multi]
    missed = sorted(multi - set(failures))
    print(f"failing instances: {len(failures)}; multi-batch instances of the suite: {len(multi)}, "
          f"caught {len(multi) - len(missed)}")
    for key in outside:
        print(f"  failure outside a multi-batch instance: {key}")
    for key in missed:
        print(f"  passed despite the bug: {key[0]} over {key[1]}, head {key[2]}, blocks of {key[3]}, "
              f"{qk_batches(*key)} batches")
    print(f"scratch: {scratch}")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())

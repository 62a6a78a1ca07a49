#!/usr/bin/env python3
"""Registers, stack and spills of pao's CUDA decode kernels, as ptxas reports them (-Xptxas -v).

    tools/scripts/cuda_registers.py --build build/release --arch 90 [--pairs f32:f32,f16:u8] [--rows]
    tools/scripts/cuda_registers.py --build build/ci --pairs f16:f16 --qk-batch 16 --keep /tmp/b16

Compiles the decode instance translation units of a configured CUDA build (its
compile_commands.json: pao's own flags) for one architecture, with nothing written into the build
folder, and prints one line per attention instance (head size, block size, activation and cache
dtype): registers per thread, stack frame, spill stores / loads, and the CTAs an SM of 64 K
registers holds (128 threads per CTA, registers allocated per warp in units of 256). The rows the
simulator's occupancy model reads (sim/src/model/kernel_registers.cpp) are printed in its form
with --rows. --pairs picks the dtype pairs (default: the simulator's three). No GPU is needed.

--qk-batch N compiles the kernels as if a batch of the Q·K loop held at most N K vectors beyond the
whole loop's 16 (the register experiments of docs/cuda.md, cuts 7 and 8): a copy of
lib/include/pao/kernels/decode_geometry.hpp with qk_batch_vectors's limit replaced by N shadows the
real one on the include path; only instances with more than 16 vectors of up to 4 elements
outside integer caches change. --keep DIR keeps the objects there (for cuobjdump -sass and
tools/scripts/sass_loops.py).
"""
import argparse
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DTYPES = ["f64", "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i32", "i64", "u8", "i8"]  # pao::DType's order
SIM_ROWS = {  # (dtype, cache): (head, block) pairs of kernel_registers.cpp
    ("f16", "f16"): [(64, 16), (128, 8), (128, 16), (128, 32), (256, 16)],
    ("bf16", "bf16"): [(64, 16), (128, 8), (128, 16), (128, 32), (256, 16)],
    ("f16", "fp8_e4m3"): [(64, 16), (128, 8), (128, 16), (128, 32), (256, 16)],
}
SIM_NAMES = {"f16": "f16", "bf16": "bf16", "fp8_e4m3": "e4m3"}


def fail(msg):
    sys.exit(f"cuda_registers.py: error: {msg}")


def compile_command(build, unit):
    db = build / "compile_commands.json"
    if not db.exists():
        fail(f"no {db}: configure a build with -DPAO_CUDA=ON first")
    for entry in json.loads(db.read_text()):
        if entry["file"].endswith(f"/instances/{unit}.cu"):
            return entry
    fail(f"{db} has no instances/{unit}.cu (is the dtype pair compiled in this build?)")


GEOMETRY = ROOT / "lib" / "include" / "pao" / "kernels" / "decode_geometry.hpp"
BATCH_LIMIT = re.compile(r"const std::int32_t most =[^;]*;")


def shadow_geometry(batch, tmp):
    """An include folder whose pao/kernels/decode_geometry.hpp caps a Q·K batch at `batch` vectors."""
    text = GEOMETRY.read_text()
    if len(BATCH_LIMIT.findall(text)) != 1:
        fail(f"{GEOMETRY}: qk_batch_vectors's 'const std::int32_t most = ...;' not found once")
    folder = tmp / "shadow"
    (folder / "pao" / "kernels").mkdir(parents=True)
    (folder / "pao" / "kernels" / "decode_geometry.hpp").write_text(
        BATCH_LIMIT.sub(f"const std::int32_t most = {batch};", text))
    return folder


def ptxas_report(entry, arch, out_dir, include_first=None):
    args = shlex.split(entry["command"])
    if include_first:
        args[1:1] = [f"-I{include_first}"]
    kept = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("--generate-code") or a.startswith("-gencode"):
            continue
        if a == "-o":
            skip = True
            continue
        kept.append(a)
    obj = out_dir / (pathlib.Path(entry["file"]).stem + ".o")
    cmd = kept + [f"-gencode=arch=compute_{arch},code=sm_{arch}", "-Xptxas", "-v", "-o", str(obj)]
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"nvcc failed on {entry['file']}:\n{r.stderr[-2000:]}")
    return r.stderr


def demangle(names):
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def parse(report):
    """{mangled name: (registers, stack, spill stores, spill loads)} of every entry function."""
    out, current, frame = {}, None, (0, 0, 0)
    for line in report.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            frame = tuple(int(g) for g in m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            out[current] = (int(m.group(1)),) + frame
            current, frame = None, (0, 0, 0)
    return out


def ctas_per_sm(registers, threads=128, warp=32):
    per_warp = -(-registers * warp // 256) * 256
    return min(65536 // (per_warp * (threads // warp)), 2048 // threads)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", type=pathlib.Path, default=ROOT / "build" / "release", help="a configured CUDA build")
    ap.add_argument("--arch", default="90", help="the SM architecture, e.g. 90 or 80")
    ap.add_argument("--rows", action="store_true", help="also print kernel_registers.cpp's rows")
    ap.add_argument("--pairs", default=",".join(f"{q}:{c}" for q, c in SIM_ROWS),
                    help="activation:cache dtype pairs to compile, comma-separated (default: the simulator's, "
                    "f16:f16,bf16:bf16,f16:fp8_e4m3; e.g. f32:f32,f16:u8)")
    ap.add_argument("--qk-batch", type=int, metavar="N",
                    help="compile with a Q·K batch of at most N K vectors beyond 16 (an experiment)")
    ap.add_argument("--keep", type=pathlib.Path, metavar="DIR", help="keep the compiled objects in DIR")
    args = ap.parse_args()
    if args.qk_batch is not None and args.qk_batch < 1:
        fail(f"--qk-batch: {args.qk_batch} is not a number of vectors (1 or more)")
    if args.qk_batch and args.rows:
        fail("--rows prints the simulator's rows of the shipped kernels: not with --qk-batch")
    pairs = []
    for pair in args.pairs.split(","):
        q, sep, c = pair.partition(":")
        if not sep or q not in DTYPES or c not in DTYPES:
            fail(f"--pairs: '{pair}' is not ACTIVATION:CACHE with dtypes of {', '.join(DTYPES)}")
        pairs.append((q, c))
    if args.rows and not set(SIM_ROWS) <= set(pairs):
        fail("--rows needs the simulator's pairs among --pairs")
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        shadow = shadow_geometry(args.qk_batch, pathlib.Path(tmp)) if args.qk_batch else None
        out_dir = args.keep or pathlib.Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for dtype, cache in pairs:
            unit = f"decode_{dtype}_{cache}"
            print(f"[{unit}] compiling for sm_{args.arch} ...", file=sys.stderr, flush=True)
            report = parse(ptxas_report(compile_command(args.build, unit), args.arch, out_dir, shadow))
            for name, plain in zip(report, demangle(list(report))):
                m = re.search(r"decode_attention_kernel<(\d+), (\d+), \(pao::DType\)(\d+), \(pao::DType\)(\d+)>", plain)
                if m:
                    head, block, q, c = (int(g) for g in m.groups())
                    found[(DTYPES[q], DTYPES[c], head, block)] = report[name]
    batch = f"; Q·K batches of at most {args.qk_batch} vectors (--qk-batch)" if args.qk_batch else ""
    print(f"# ptxas -v, sm_{args.arch}: pao's decode attention kernel (one kernel for V1 and V2), 128 threads{batch}")
    print("dtype,cache,head,block,registers,stack_bytes,spill_stores,spill_loads,ctas_per_sm_by_registers")
    for (dtype, cache, head, block), (regs, stack, st, ld) in sorted(found.items()):
        print(f"{dtype},{cache},{head},{block},{regs},{stack},{st},{ld},{ctas_per_sm(regs)}")
    if args.rows:
        print("\n// sim/src/model/kernel_registers.cpp rows:")
        for (dtype, cache), pairs in SIM_ROWS.items():
            for head, block in pairs:
                regs = found.get((dtype, cache, head, block))
                if regs is None:
                    fail(f"no instance {dtype}/{cache} head {head} block {block} in the build")
                print(f"{{pao_cuda, v1, {SIM_NAMES[dtype]}, {SIM_NAMES[cache]}, {head}, {block}, {regs[0]}}},")


if __name__ == "__main__":
    main()

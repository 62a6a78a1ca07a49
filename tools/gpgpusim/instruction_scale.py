#!/usr/bin/env python3
"""Derives the pao-cuda instruction scale and the simulated V100's cycles per warp instruction from
the microbenchmark launches (docs/gpgpusim.md, "Instruction counts and in-order issue"):

    tools/gpgpusim/time_grid.py --suite gpgpusim-microbench --sms 80 \\
        --out data/measurements/gpgpusim-v100-microbench-cuts.csv
    tools/gpgpusim/instruction_scale.py data/measurements/gpgpusim-v100-microbench-cuts.csv

(data/measurements/gpgpusim-v100-microbench.csv holds the same launches of the kernels before issue
#38's cuts, implementation pao-cuda-pre38; gpgpusim-v100-microbench-vllm.csv those of vLLM's own
kernels that vllm-decode-bench runs, f16 at blocks of 16: the PTX vLLM's kernels issue per
operation the model counts.)

Each row of the CSV is one launch of pao's CUDA decode kernels (one query head, so one CTA per
partition, alone on its SM) with GPGPU-Sim's cycles and thread instructions per kernel (its note).

- The attention kernel's warp instructions per CTA (GPGPU-Sim's gpgpu_n_tot_w_icount, the warp
  instructions issued, per kernel, over its CTAs) against the model of vLLM's kernel (`pao sim run
  --json`, implementation vllm), whose count is blocks x per-block + softmax rounds x per-round +
  fixed: pao's count, least squares over the lengths, as per_tokens x the model's blocks and
  rounds + per_cta x its fixed part (the lengths cannot separate a block's work from its tokens'
  softmax: they grow together). per_tokens and per_cta are the factors of
  sim/src/model/instruction_model.cpp.
- The reduce's factors: pao's reduce CTA's instructions over the model's, least squares, for one
  partition (a copy) and for two or more (the merge).
- Cycles per warp instruction: every kernel's cycles less the config's launch latency and less its
  CTA's dependent load round trips (the model's max_cta_iterations x the descriptor's
  iteration_latency_us: a warp waits on a load, then issues what uses it), over its CTA's
  instructions per warp (its 4 warps run side by side on the SM's 4 schedulers, with equal shares:
  the lengths are multiples of 4 blocks), least squares through the origin per instance: f16's with
  blocks of 16 is the in-order rate (pao-cuda: cycles_per_warp_instruction of
  data/devices/gpgpusim-v100*.json; pao-cuda-pre38: kPaoCudaPre38CyclesPerWarpInstruction), and
  each instance's over it the in_order factor of instruction_model.cpp.
  tests/sim/test_sim_gpgpusim.cpp recomputes both from the CSVs.
"""
import argparse
import csv
import json
import math
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
THREADS = 128  # pao's decode CTA (kThreadsPerCta), 4 warps of 32
WARP = 32


def fail(msg):
    sys.exit(f"instruction_scale.py: error: {msg}")


def rows_of(path):
    lines = [line for line in pathlib.Path(path).read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def measured(row):
    """[(cycles, warp instructions)] per kernel of the launch, from the row's note."""
    note = row["note"]
    cyc = re.search(r"cycles ([\d + ]+);", note)
    ins = re.search(r"(\d+) warp instructions(?: \(([\d + ]+)\))?", note)
    if not cyc or not ins:
        fail(f"row {row['kernel']} {row['seq_len']}: no cycles / warp instructions in its note")
    cycles = [int(c) for c in cyc.group(1).split("+")]
    insts = [int(i) for i in ins.group(2).split("+")] if ins.group(2) else [int(ins.group(1))]
    if len(cycles) != len(insts):
        fail(f"row {row['kernel']} {row['seq_len']}: {len(cycles)} kernels' cycles, {len(insts)} instruction counts")
    return list(zip(cycles, insts))


# The model's own count of vLLM's kernels: the descriptor's expansion of it (what GPGPU-Sim issues of
# vLLM's PTX, which this script measures on vLLM's rows) set aside.
COUNTED = [arg for part in ("tokens", "cta", "reduce_copy", "reduce_merge")
           for arg in ("--set", f"instruction_expansion_{part}=1")]


def model(pao, row, device, implementation="vllm"):
    """The model's launch of the implementation's kernels: per kernel (CTAs, warp instructions at
    the model's count, the most dependent load round trips of a CTA)."""
    cmd = [pao, "sim", "run", "--device", device, *COUNTED, "--kernel", row["kernel"], "--num-seqs", row["num_seqs"],
           "--num-heads", row["num_heads"], "--num-kv-heads", row["num_kv_heads"], "--head-size", row["head_size"],
           "--block-size", row["block_size"], "--dtype", row["dtype"], "--seq-len", row["seq_len"],
           "--kv-cache-dtype", row.get("kv_cache_dtype") or "auto",
           "--implementation", implementation, "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: {r.stderr.strip()}")
    kernels = json.loads(r.stdout)["kernels"]
    if any("max_cta_iterations" not in k for k in kernels):
        fail(f"{pao} prints no max_cta_iterations: build a pao of 2026-12-06 or later")
    return [(k["ctas"], k["warp_instructions"], k["max_cta_iterations"]) for k in kernels]


def least_squares(a, b):
    """x minimising |A x - b| (A: rows of equal length), by the normal equations."""
    n = len(a[0])
    ata = [[sum(r[i] * r[j] for r in a) for j in range(n)] for i in range(n)]
    atb = [sum(r[i] * y for r, y in zip(a, b)) for i in range(n)]
    for c in range(n):  # Gauss-Jordan with partial pivoting
        p = max(range(c, n), key=lambda i: abs(ata[i][c]))
        ata[c], ata[p], atb[c], atb[p] = ata[p], ata[c], atb[p], atb[c]
        if abs(ata[c][c]) < 1e-12:
            fail("the lengths do not separate blocks, softmax rounds and the fixed part")
        for i in range(n):
            if i != c:
                f = ata[i][c] / ata[c][c]
                ata[i] = [x - f * y for x, y in zip(ata[i], ata[c])]
                atb[i] -= f * atb[c]
    return [atb[i] / ata[i][i] for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="the microbenchmark CSV (time_grid.py --suite gpgpusim-microbench)")
    ap.add_argument("--pao", default=str(ROOT / "build" / "release" / "tools" / "pao"), help="the pao binary")
    ap.add_argument("--device", default="gpgpusim-v100", help="descriptor of the simulated device")
    ap.add_argument("--verbose", action="store_true", help="every kernel's cycles per warp instruction")
    args = ap.parse_args()
    device = json.loads((ROOT / "data" / "devices" / f"{args.device}.json").read_text())["fields"]
    launch_cycles = device["launch_latency_us"]["value"] * device["clock_ghz"]["value"] * 1e3
    trip_cycles = device["iteration_latency_us"]["value"] * device["clock_ghz"]["value"] * 1e3

    instances = {}  # (dtype, cache, block size) -> (attention, reduce): [(length | partitions, pao, model)]
    cpi = []  # (instructions per warp, cycles less the launch latency and the round trips, name)
    attention_row = {}  # a row of each instance (its shapes, for the model's own lengths)
    rows = rows_of(args.csv)
    implementation = rows[0].get("implementation", "pao-cuda") if rows else "pao-cuda"
    for row in rows:
        if row.get("implementation", "pao-cuda") != implementation or \
                implementation not in ("pao-cuda", "pao-cuda-pre38", "vllm"):
            fail(f"row {row['kernel']} {row['seq_len']}: implementation {row['implementation']}; "
                 f"pao-cuda, pao-cuda-pre38 or vllm is expected, the same in every row")
        if row["num_seqs"] != "1" or row["num_heads"] != "1":
            fail(f"row {row['kernel']} {row['seq_len']}: the microbenchmarks are one sequence, one head")
        got, want = measured(row), model(args.pao, row, args.device)
        trips = [k[2] for k in model(args.pao, row, args.device, implementation)]
        if len(got) != len(want):
            fail(f"row {row['kernel']} {row['seq_len']}: {len(got)} kernels simulated, the model has {len(want)}")
        key = (row["dtype"], row.get("kv_cache_dtype") or "auto", int(row["block_size"]))
        attention, reduce = instances.setdefault(key, ([], []))
        attention_row[key] = row
        length = int(row["seq_len"])
        for i, ((cycles, warp_insts), (ctas, model_insts, _)) in enumerate(zip(got, want)):
            pao_per_cta, model_per_cta = warp_insts / ctas, model_insts / ctas
            if i == 0 and row["kernel"] == "v1":
                attention.append((length, pao_per_cta, model_per_cta))
            if i == 1:
                reduce.append((math.ceil(length / int(row["partition_size"])), pao_per_cta, model_per_cta))
            name = f"{key[0]}/{key[1]} b{key[2]} {row['kernel']} {length} #{i}"
            cpi.append((pao_per_cta / (THREADS // WARP), cycles - launch_cycles - trips[i] * trip_cycles, name))

    table = []
    for (dtype, cache, block_size), (attention, reduce) in sorted(instances.items()):
        print(f"== {dtype} activations, {cache} cache, blocks of {block_size}, head 128")
        if len(attention) < 3:
            fail(f"{dtype}/{cache} b{block_size}: {len(attention)} V1 lengths, 3 are needed")
        # The model's parts, exactly: its count is linear in blocks and softmax rounds, which the
        # model alone separates at lengths of its own (64 to 256 tokens: 1 or 2 rounds).
        probe = dict(attention_row[(dtype, cache, block_size)], kernel="v1")
        lengths = (64, 128, 192, 256)
        design = [[math.ceil(n / block_size), math.ceil(n / THREADS), 1.0] for n in lengths]
        counts = [model(args.pao, dict(probe, seq_len=str(n)), args.device)[0][1] for n in lengths]
        per_block, per_round, per_cta = least_squares(design, counts)
        design = [[math.ceil(n / block_size), math.ceil(n / THREADS), 1.0] for n, _, _ in attention]
        # pao's count as factors of the model's two parts that the lengths separate: the work that
        # grows with the tokens (a block's Q.K and P.V and its tokens' softmax grow together) and
        # the fixed part.
        growing = [[d[0] * per_block + d[1] * per_round, d[2] * per_cta] for d in design]
        f_tokens, f_cta = least_squares(growing, [p for _, p, _ in attention])
        print(f"  model (vLLM): {per_block:.1f} per block, {per_round:.1f} per softmax round, {per_cta:.1f} fixed")
        print(f"  per_tokens {f_tokens:.3f}, per_cta {f_cta:.3f}")
        for (n, p, m), g in zip(attention, growing):
            fit = f_tokens * g[0] + f_cta * g[1]
            print(f"    V1 {n:5d} tokens: GPGPU-Sim {p:9.1f}, model {m:8.1f}, scaled {fit:9.1f} "
                  f"({100 * (fit / p - 1):+.2f} %)")
        factors = [f_tokens, f_cta]
        for name, pairs in (("reduce_copy", [r for r in reduce if r[0] == 1]),
                            ("reduce_merge", [r for r in reduce if r[0] > 1])):
            if not pairs:
                fail(f"{dtype}/{cache} b{block_size}: no reduce of {'one partition' if name == 'reduce_copy' else '2+'}")
            factor = sum(p * m for _, p, m in pairs) / sum(m * m for _, _, m in pairs)
            factors.append(factor)
            print(f"  {name} {factor:.3f}")
            for n, p, m in sorted(set(pairs)):
                print(f"    {n} partitions: GPGPU-Sim {p:7.1f}, model {m:6.1f}, scaled {m * factor:7.1f} "
                      f"({100 * (m * factor / p - 1):+.2f} %)")
        table.append((dtype, cache, block_size, factors))
    def through_origin(points):
        return sum(x * y for x, y, _ in points) / sum(x * x for x, _, _ in points)

    reference = ("f16", "auto", 16)
    if reference not in instances:
        fail("no f16 microbenchmark with blocks of 16: the device's cycles per warp instruction is its")
    cpi_of = {key: through_origin([c for c in cpi if c[2].startswith(f"{key[0]}/{key[1]} b{key[2]} ")])
              for key in instances}
    device_cpi = cpi_of[reference]
    print(f"\ncycles per warp instruction in program order (each kernel's cycles less the {launch_cycles:.0f}-cycle launch")
    print(f"and its CTA's round trips at {trip_cycles:.0f} cycles, over its busiest warp's instructions; least squares")
    print("through the origin per instance):")
    for key in sorted(instances):
        ratios = sorted(y / x for x, y, n in cpi if n.startswith(f"{key[0]}/{key[1]} b{key[2]} "))
        print(f"  {key[0]:5s} {key[1]:9s} {key[2]:3d}: {cpi_of[key]:6.2f}  (kernels {ratios[0]:.2f} to {ratios[-1]:.2f}); "
              f"in_order {cpi_of[key] / device_cpi:.3f}")
    where = {"pao-cuda": "cycles_per_warp_instruction of data/devices/gpgpusim-v100*.json",
             "pao-cuda-pre38": "kPaoCudaPre38CyclesPerWarpInstruction",
             "vllm": "vLLM's PTX on this simulator; the model takes the device's"}[implementation]
    print(f"f16, blocks of 16: {device_cpi:.2f}, the in-order rate ({where})")
    if implementation == "vllm":
        print("\nvLLM's PTX under GPGPU-Sim over the model's operation count of vLLM's kernel: the descriptors' "
              "instruction_expansion_{tokens, cta, reduce_copy, reduce_merge} (data/devices/gpgpusim-v100*.json):")
    else:
        print(f"\nInstructionScale of {implementation} (per_tokens, per_cta, reduce_copy, reduce_merge, in_order), "
              "sim/src/model/instruction_model.cpp:")
    for dtype, cache, block_size, f in table:
        in_order = cpi_of[(dtype, cache, block_size)] / device_cpi
        print(f"  {dtype:5s} {cache:9s} {block_size:3d}: {{{f[0]:.3f}, {f[1]:.3f}, {f[2]:.3f}, {f[3]:.3f}, {in_order:.3f}}}")
    if args.verbose:
        for x, y, name in cpi:
            print(f"  {name:34s} {x:9.1f} per warp, {y:8.0f} cycles: {y / x:6.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""pao's CUDA decode kernels against vLLM's, row by row, from two measurement CSVs of the same GPU.

    tools/scripts/cuda_vs_vllm.py [PAO_CSV] [VLLM_CSV] [--device DESCRIPTOR]

Defaults: data/measurements/h200-pao-cuda.csv and h200-vllm.csv (pao-cuda-bench's columns, docs/cuda.md), the
peak from data/devices/h200.json. A row of each is the same measurement when every column that names the
workload and the timing agrees (kernel, partition, sequences, heads, head and block size, dtypes, seq_len,
timing). For each pair: both times, pao / vLLM, and each one's bandwidth as a fraction of the device's DRAM peak
(achieved_gbps / dram_peak_gbps). Then the geometric mean and the worst ratio, overall and for V2, and issue
#38's two targets: V2 within 1.3x of vLLM's on every row, and >= 35 % of the peak at 128 x 4096 (V1 or V2).
A CSV without a gpu column (as pao-cuda-bench writes it) is taken as the other's GPU.
Any two CSVs of one device compare: GPGPU-Sim's too (tools/gpgpusim/time_grid.py, with
--device data/devices/gpgpusim-v100-16sm.json; their rows carry no bandwidth: "-").
Exit 0 when the targets hold, 1 when one does not, 2 when the input is unusable (no pair in common).
"""

import argparse
import csv
import json
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
KEY = ("gpu", "kernel", "num_seqs", "num_heads", "num_kv_heads", "head_size", "block_size", "dtype",
       "kv_cache_dtype", "seq_len", "timing")


def read(path):
    """The data rows of a measurement CSV (lines starting with '#' are comments) and its columns."""
    with open(path, newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        data = list(reader)
        columns = reader.fieldnames or []
    missing = [k for k in KEY + ("time_us",) if k != "gpu" and k not in columns]
    if missing:
        raise SystemExit(f"cuda_vs_vllm: {path}: no column {', '.join(missing)}")
    return data, columns


def by_key(data, with_gpu):
    """Rows by KEY; without with_gpu the gpu cell is left out of the key."""
    return {tuple(r[k] if k != "gpu" or with_gpu else "" for k in KEY): r for r in data}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pao_csv", nargs="?", default=str(ROOT / "data/measurements/h200-pao-cuda.csv"))
    parser.add_argument("vllm_csv", nargs="?", default=str(ROOT / "data/measurements/h200-vllm.csv"))
    parser.add_argument("--device", default=str(ROOT / "data/devices/h200.json"),
                        help="descriptor whose dram_peak_gbps is the peak (default data/devices/h200.json)")
    args = parser.parse_args(argv)
    peak = json.loads(pathlib.Path(args.device).read_text())["fields"]["dram_peak_gbps"]["value"]
    # Rows of one GPU are compared; a CSV without a gpu column (pao-cuda-bench's) is taken as that GPU's.
    (pao_rows, pao_columns), (vllm_rows, vllm_columns) = read(args.pao_csv), read(args.vllm_csv)
    with_gpu = "gpu" in pao_columns and "gpu" in vllm_columns
    pao, vllm = by_key(pao_rows, with_gpu), by_key(vllm_rows, with_gpu)
    # In the order of the measurements: sequences, then length, then the kernel.
    common = sorted((k for k in pao if k in vllm), key=lambda k: (int(k[2]), int(k[9]), k[1] != "v1", k[1]))
    if not common:
        print(f"cuda_vs_vllm: no row of {args.pao_csv} has a match in {args.vllm_csv}", file=sys.stderr)
        return 2
    print(f"{'seqs x len':>12} {'kernel':8} {'pao us':>9} {'vLLM us':>9} {'pao/vLLM':>9} {'pao peak':>9} {'vLLM peak':>9}")
    ratios, v2_ratios, at_128x4096 = [], [], []
    for k in common:
        p, v = pao[k], vllm[k]
        ratio = float(p["time_us"]) / float(v["time_us"])
        ratios.append(ratio)
        kernel = k[1]
        if kernel.startswith("v2"):
            v2_ratios.append((ratio, k))
        frac = [float(r["achieved_gbps"]) / peak if r.get("achieved_gbps") else float("nan") for r in (p, v)]
        if k[2] == "128" and k[9] == "4096":
            at_128x4096.append(frac[0])
        shown = [f"{f:.1%}" if f == f else "-" for f in frac]  # "-": a CSV without achieved_gbps
        print(f"{k[2] + ' x ' + k[9]:>12} {kernel:8} {float(p['time_us']):9.1f} {float(v['time_us']):9.1f} "
              f"{ratio:8.2f}x {shown[0]:>8} {shown[1]:>9}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\n{len(common)} rows in common ({len(pao)} pao, {len(vllm)} vLLM): pao / vLLM geometric mean "
          f"{geomean:.2f}x, worst {max(ratios):.2f}x")
    ok = True
    if v2_ratios:
        worst, key = max(v2_ratios)
        held = worst <= 1.3
        ok &= held
        print(f"V2 within 1.3x of vLLM's on every row: {'yes' if held else 'no'} (worst {worst:.2f}x, "
              f"{key[2]} x {key[9]} {key[1]})")
    if at_128x4096:
        best = max(at_128x4096)
        held = best >= 0.35
        ok &= held
        print(f">= 35 % of the peak at 128 x 4096: {'yes' if held else 'no'} ({best:.1%})")
    else:
        print(">= 35 % of the peak at 128 x 4096: not measured (no 128 x 4096 row of pao's)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

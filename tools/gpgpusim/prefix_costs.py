#!/usr/bin/env python3
"""What pao's CUDA prefix kernel costs under GPGPU-Sim, per launch of the prefix microbenchmarks
(docs/gpgpusim.md, "What is not modelled"): the data a pao-cuda prefix model would be fitted on.

    tools/gpgpusim/time_grid.py --suite gpgpusim-prefix-microbench --sms 80 \\
        --out data/measurements/gpgpusim-v100-prefix-microbench.csv
    tools/gpgpusim/prefix_costs.py data/measurements/gpgpusim-v100-prefix-microbench.csv

Each row is one CTA (one query head, at most 128 new tokens) alone on its SM. Printed per launch:
its warp instructions (GPGPU-Sim's gpgpu_n_tot_w_icount), those per (new token x key it attends:
all cached keys, and the new ones up to the causal limit, counted as the kernel computes them,
masked or not: new tokens x sequence length), and cycles per warp instruction of one warp (cycles
less the config's launch latency, over the instructions of one of the CTA's 4 warps, taken as equal
shares: an upper bound for the busiest warp's, which also runs the softmax rows).
"""
import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from instruction_scale import ROOT, fail, measured, rows_of  # noqa: E402

WARPS_PER_CTA = 4  # kPrefixThreads (cuda/include/pao/cuda/prefix_launch.hpp) / 32


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="the prefix microbenchmark CSV (time_grid.py --suite gpgpusim-prefix-microbench)")
    ap.add_argument("--device", default="gpgpusim-v100", help="descriptor of the simulated device")
    args = ap.parse_args()
    device = json.loads((ROOT / "data" / "devices" / f"{args.device}.json").read_text())["fields"]
    launch_cycles = device["launch_latency_us"]["value"] * device["clock_ghz"]["value"] * 1e3
    print(f"{'new':>4} {'cached':>6} {'time_us':>9} {'warp instr':>11} {'per new x key':>13} {'cycles/instr/warp':>17}")
    for row in rows_of(args.csv):
        if not row["kernel"].startswith("prefix"):
            fail(f"row {row['kernel']} {row['seq_len']}: not a prefix launch")
        ((cycles, insts),) = measured(row)
        new, length = int(row["query_len"]), int(row["seq_len"])
        per_pair = insts / (new * length)
        cpi = (cycles - launch_cycles) / (insts / WARPS_PER_CTA)
        print(f"{new:>4} {length - new:>6} {float(row['time_us']):>9.1f} {insts:>11} {per_pair:>13.1f} {cpi:>17.2f}")


if __name__ == "__main__":
    main()

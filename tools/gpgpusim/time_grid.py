#!/usr/bin/env python3
"""Times pao's CUDA kernels under GPGPU-Sim, one launch at a time, and writes measurement CSVs
that `pao sim validate` / `pao sim calibrate` read (docs/gpgpusim.md, "Cycle timings").

    tools/gpgpusim/time_grid.py --suite gpgpusim-timing --sms 80 --only decode --out data/measurements/gpgpusim-v100.csv
    tools/gpgpusim/time_grid.py --suite gpgpusim-timing --sms 16 --only decode --out data/measurements/gpgpusim-v100-16sm.csv

    tools/gpgpusim/time_grid.py --suite gpgpusim-timing --sms 16 --only decode --implementation vllm \
        --out data/measurements/gpgpusim-v100-16sm-vllm.csv

Each (case, kernel) of the suite runs in its own simulator process: pao-cuda-bench --cases ID
--kernels K --warmup 0 --repeats 1 under tools/gpgpusim/run.sh. With --implementation vllm the same
rows time vLLM's own kernels instead (vllm-decode-bench, built by tools/gpgpusim/vllm/build.sh from a
vLLM source tree outside this repository; decode rows of its one instance: head 128, blocks of 16,
f16): their outputs are reported in the note, not judged, since GPGPU-Sim computes vLLM's packed
f16x2 arithmetic on one half (gpgpusim-repro). The time is the simulator's cycles
of the launch's kernels (V2: attention + reduce; `gpu_sim_cycle` per kernel, the kernel launch
latency of the config included) divided by the config's core clock. The run is resumable: rows
already in --out are kept and not rerun; every finished row is appended at once. --jobs runs that
many simulator processes side by side (one core each).
"""
import argparse
import concurrent.futures
import csv
import datetime
import os
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
COLUMNS = ["device", "gpu", "kernel", "partition_size", "num_seqs", "num_heads", "num_kv_heads", "head_size",
           "block_size", "dtype", "kv_cache_dtype", "seq_len", "query_len", "max_seq_len", "time_us", "timing",
           "group", "source", "source_date", "implementation", "note"]


def log(msg):
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", flush=True)


def config_clock_mhz(config_dir):
    text = (config_dir / "gpgpusim.config").read_text()
    m = re.search(r"^-gpgpu_clock_domains\s+([0-9.]+):", text, re.M)
    if not m:
        sys.exit(f"time_grid.py: error: no -gpgpu_clock_domains in {config_dir}/gpgpusim.config")
    return float(m.group(1))


def bench_cases(prefix, suite):
    """The measurement rows (without times) of every (case, kernel) of the suite, from
    pao-cuda-bench --list --csv (run under the simulator: the binary links its runtime)."""
    work = prefix / "runs" / "time-grid-list"
    work.mkdir(parents=True, exist_ok=True)
    listing = work / "runs.csv"
    out = subprocess.run([str(HERE / "run.sh"), "--work", str(work), "--", "pao-cuda-bench", "--suite", suite,
                          "--list", "--csv", "--out", str(listing)], capture_output=True, text=True)
    if out.returncode != 0 or not listing.exists():
        sys.exit(f"time_grid.py: error: pao-cuda-bench --list failed:\n{out.stdout}{out.stderr}")
    rows = list(csv.DictReader(listing.read_text().splitlines()))
    if not rows:
        sys.exit("time_grid.py: error: the suite has no case to time")
    return rows


def simulated_kernels(log_text):
    """[(kernel name, cycles, thread instructions, warp instructions)] of every kernel the simulator
    ran, in order. GPGPU-Sim prints each kernel's gpu_sim_cycle and gpu_sim_insn (thread
    instructions) and the running total of warp instructions issued, gpgpu_n_tot_w_icount."""
    kernels, warps_before = [], 0
    for section in re.split(r"^(?=kernel_name = )", log_text, flags=re.M)[1:]:
        name = re.match(r"kernel_name = (\S+)", section)
        cycles = re.search(r"^gpu_sim_cycle = (\d+)", section, re.M)
        insts = re.search(r"^gpu_sim_insn = (\d+)", section, re.M)
        warps = re.search(r"^gpgpu_n_tot_w_icount = (\d+)", section, re.M)
        if not (name and cycles and insts and warps):
            continue  # a kernel still running when the log ends
        total = int(warps.group(1))
        kernels.append((name.group(1), int(cycles.group(1)), int(insts.group(1)), total - warps_before))
        warps_before = total
    return kernels


def run_one(args, row, clock_mhz):
    """Runs one (case, kernel) under the simulator; returns the CSV row or raises RuntimeError."""
    work = args.prefix / "runs" / f"time-{args.sms}sm-{row['note']}-{row['kernel'].replace(':', '')}"
    work.mkdir(parents=True, exist_ok=True)
    sim_log = work / "gpgpusim.log"
    kernel = row["bench_kernel"]
    if args.implementation == "vllm":
        work = work.with_name(work.name + "-vllm")
        work.mkdir(parents=True, exist_ok=True)
        sim_log = work / "gpgpusim.log"
        program = [str(args.prefix / "bin" / "vllm-decode-bench"), "--kernel", row["kernel"],
                   "--num-seqs", row["num_seqs"], "--seq-len", row["seq_len"], "--num-heads", row["num_heads"],
                   "--num-kv-heads", row["num_kv_heads"], "--timing-only"]
    else:
        program = ["pao-cuda-bench", "--suite", args.suite, "--cases", row["note"], "--kernels", kernel,
                   "--warmup", "0", "--repeats", "1", "--no-l2-flush", "--out", str(work / "bench.csv")]
    cmd = [str(HERE / "run.sh"), "--sms", str(args.sms), "--work", str(work), "--timing", "--"] + program
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    text = sim_log.read_text() if sim_log.exists() else ""
    marker = "4vllm" if args.implementation == "vllm" else "pao4cuda6detail"
    launched = [k for k in simulated_kernels(text) if marker in k[0]]
    if r.returncode != 0 or not launched:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-6:])
        raise RuntimeError(f"{row['note']} {kernel}: exit {r.returncode}, {len(launched)} kernels simulated\n{tail}")
    cycles = sum(k[1] for k in launched)
    insts = sum(k[2] for k in launched)
    out = {c: row.get(c, "") for c in COLUMNS}
    out["device"] = f"GPGPU-Sim SM7_QV100 {args.sms} SMs"
    out["gpu"] = args.gpu
    out["time_us"] = f"{cycles / clock_mhz:.4f}"
    # GPGPU-Sim's cycles of a kernel include the config's launch latency (-gpgpu_kernel_launch_latency:
    # a one-partition reduce, 68 instructions a warp, takes 5992 cycles): host timing, in pao sim's terms.
    out["timing"] = "host"
    out["implementation"] = args.implementation  # whose kernels (pao sim: --implementation)
    out["group"] = f"{args.gpu}:{row['note']}"
    # No commas in a cell: the measurement CSVs are read by splitting at commas (docs/simulator.md).
    out["source"] = f"GPGPU-Sim {args.sim_commit} + tools/gpgpusim/patches; config SM7_QV100 (sm_75 code); " \
                    f"{args.sms} SMs; core clock {clock_mhz:g} MHz"
    out["source_date"] = datetime.date.today().isoformat()
    per_kernel = " + ".join(str(k[1]) for k in launched)
    def per_kernel_counts(i):
        return f" ({' + '.join(str(k[i]) for k in launched)})" if len(launched) > 1 else ""
    warps = sum(k[3] for k in launched)
    out["note"] = (f"{row['note']}; cycles {per_kernel}; {insts} thread instructions{per_kernel_counts(2)}; "
                   f"{warps} warp instructions{per_kernel_counts(3)}; {wall:.0f} s simulated")
    if args.implementation == "vllm":
        check = re.search(r"max \|out - reference\| (\S+):", text)
        out["note"] += f"; {args.vllm_source}; max |out - float64 reference| {check.group(1) if check else '?'}" \
                       " (not judged: GPGPU-Sim's f16x2)"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="gpgpusim-timing", help="the case suite to time (data/cases)")
    ap.add_argument("--sms", type=int, default=80, help="SMs of the modelled V100 (run.sh --sms)")
    ap.add_argument("--gpu", help="the CSV's gpu column (default gpgpusim-v100, or gpgpusim-v100-<N>sm)")
    ap.add_argument("--out", required=True, help="the measurement CSV (appended; existing rows are kept)")
    ap.add_argument("--prefix", type=pathlib.Path, default=ROOT / "build" / "gpgpusim", help="setup.sh's folder")
    ap.add_argument("--jobs", type=int, default=1, help="simulator processes side by side")
    ap.add_argument("--only", help="run only the (case, kernel) whose id and kernel contain this text")
    ap.add_argument("--implementation", choices=["pao-cuda", "vllm"], default="pao-cuda",
                    help="whose kernels: pao's (pao-cuda-bench) or vLLM's (vllm-decode-bench, tools/gpgpusim/vllm)")
    ap.add_argument("--vllm-source", default="vLLM 0.22.1 sdist",
                    help="with --implementation vllm: the vLLM source the bench was built from, for the rows")
    args = ap.parse_args()
    args.gpu = args.gpu or ("gpgpusim-v100" if args.sms == 80 else f"gpgpusim-v100-{args.sms}sm")
    args.prefix = args.prefix.resolve()
    commit = args.prefix / "sim-commit.txt"
    if not commit.exists():
        sys.exit(f"time_grid.py: error: no simulator in {args.prefix}: run tools/gpgpusim/setup.sh first")
    args.sim_commit = commit.read_text().strip()[:8]
    clock = config_clock_mhz(args.prefix / "src" / "configs" / "tested-cfgs" / "SM7_QV100")

    runs = bench_cases(args.prefix, args.suite)
    if args.implementation == "vllm":
        if not (args.prefix / "bin" / "vllm-decode-bench").exists():
            sys.exit("time_grid.py: error: no vllm-decode-bench: run tools/gpgpusim/vllm/build.sh --vllm DIR first")
        instance = {"head_size": "128", "block_size": "16", "dtype": "f16", "kv_cache_dtype": "auto"}
        kept = [r for r in runs if r["kernel"] in ("v1", "v2:256", "v2:512", "v2:1024")
                and all(r.get(k) == v for k, v in instance.items())]
        if len(kept) < len(runs):
            log(f"{len(runs) - len(kept)} runs left out: vllm-decode-bench holds decode, head 128, blocks of 16, f16 only")
        runs = kept
    out_path = pathlib.Path(args.out)
    done = set()
    if out_path.exists():
        for r in csv.DictReader(line for line in out_path.read_text().splitlines() if not line.startswith("#")):
            done.add((r["note"].split(";")[0], r["kernel"]))
    else:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with out_path.open("w") as f:
            whose = "vLLM's CUDA kernels" if args.implementation == "vllm" else "pao's CUDA kernels"
            f.write(f"# {whose} timed under GPGPU-Sim (tools/gpgpusim/time_grid.py --suite {args.suite} "
                    f"--sms {args.sms} --implementation {args.implementation}): one launch per row, "
                    f"time_us = simulated cycles / {clock:g} MHz.\n"
                    "# A second, independent model of a Volta GPU executing the real kernels: a cross-check of\n"
                    "# pao's simulator, not hardware ground truth (docs/gpgpusim.md, 'How far to trust it').\n")
            f.write(",".join(COLUMNS) + "\n")
    if args.only:
        runs = [r for r in runs if args.only in r["note"] + " " + r["kernel"]]
    todo = [r for r in runs if (r["note"], r["kernel"]) not in done]
    log(f"{len(runs)} runs{' matching ' + repr(args.only) if args.only else ''} in suite {args.suite}, "
        f"{len(runs) - len(todo)} already in {out_path}, {len(todo)} to run on {args.sms} SMs with {args.jobs} job(s)")
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, args, r, clock): r for r in todo}
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            r = futures[fut]
            try:
                row = fut.result()
            except RuntimeError as e:
                failures += 1
                log(f"[{n}/{len(todo)}] FAILED {e}")
                continue
            with out_path.open("a") as f:
                csv.DictWriter(f, COLUMNS, lineterminator="\n").writerow(row)
            log(f"[{n}/{len(todo)}] {r['note']} {r['kernel']}: {row['time_us']} us ({row['note'].split('; ', 1)[1]})")
    log(f"done: {len(todo) - failures} rows written, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

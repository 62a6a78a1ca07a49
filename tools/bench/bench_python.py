"""pao.ops.paged_attention_v2 on torch tensors against pao-bench's C++ time for the same case.

Runs pao-bench's decode case (data/cases/bench.json: 8 x 32768 tokens, 32/8 heads, head size
128, f16, V2 partitions of 512) in kernel precision with `pao-bench --cases decode`, then the same
case through the Python package: its seeded inputs made by pao.cases.make_golden (no outputs,
torch tensors sharing the arrays' memory) and passed to pao.ops.paged_attention_v2 with vLLM's
arguments. Prints both times (fastest of --repeats; pao-bench runs before and after the Python
runs, and the faster counts), their ratio, and the process's peak RSS
against the caches' size: a copy of the caches would add their size again.

    .venv/bin/python tools/bench/bench_python.py --pao-bench build/release/tools/pao-bench
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def cpp_seconds(pao_bench, repeats):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        subprocess.run([pao_bench, "--cases", "decode", "--repeats", str(repeats), "--json", path], check=True,
                       stdout=subprocess.DEVNULL)
        with open(path) as f:
            results = json.load(f)["results"]
    return next(r["seconds"] for r in results if r["case"] == "decode" and r["precision"] == "kernel")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pao-bench", default="build/release/tools/pao-bench", help="the pao-bench binary")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    import torch
    import pao

    case_path = os.path.join(pao.data_dir(), "cases", "bench.json")
    with open(case_path) as f:
        case = next(g["fixed"] for g in json.load(f)["grids"] if g["name"] == "decode")
    rss0 = peak_rss_bytes()
    g = pao.cases.make_golden(case, outputs="none", like="torch")
    c = pao.cases.load(case)
    query, key_cache, value_cache = g["query"], g["key_cache"], g["value_cache"]
    cache_bytes = key_cache.nbytes + value_cache.nbytes
    rss_inputs = peak_rss_bytes()
    cpp_before = cpp_seconds(args.pao_bench, args.repeats)  # C++ before and after: a noisy machine shows
    num_seqs, num_heads, head_size = query.shape
    partitions = (c["max_seq_len"] + c["partition_size"] - 1) // c["partition_size"]
    out = torch.empty_like(query)
    tmp_out = torch.empty(num_seqs, num_heads, partitions, head_size, dtype=query.dtype)
    exp_sums = torch.empty(num_seqs, num_heads, partitions, dtype=torch.float32)
    max_logits = torch.empty_like(exp_sums)
    best = float("inf")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        pao.ops.paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache,
                                   c["num_kv_heads"], float(g.metadata["scale"]), g["block_tables"], g["seq_lens"],
                                   c["block_size"], c["max_seq_len"], None, "auto", 1.0, 1.0,
                                   partition_size=c["partition_size"])
        best = min(best, time.perf_counter() - t0)
    rss_run = peak_rss_bytes()
    cpp_after = cpp_seconds(args.pao_bench, args.repeats)
    cpp = min(cpp_before, cpp_after)
    print(f"case decode: {num_seqs} x {c['max_seq_len']} tokens, heads {num_heads}/{c['num_kv_heads']}, "
          f"head_size {head_size}, {c['dtype']}, V2 partitions of {c['partition_size']}, kernel precision, "
          f"{torch.get_num_threads()} threads")
    print(f"pao-bench (C++)                    {cpp:8.3f} s   (fastest of {args.repeats} runs, before: "
          f"{cpp_before:.3f} s, after: {cpp_after:.3f} s)")
    print(f"pao.ops.paged_attention_v2 (torch) {best:8.3f} s   ratio {best / cpp:.3f} (Python / C++)")
    print(f"caches {cache_bytes / 1e9:.3f} GB; peak RSS {rss0 / 1e9:.3f} GB at start, {rss_inputs / 1e9:.3f} GB "
          f"with the inputs, {rss_run / 1e9:.3f} GB after the runs (+{(rss_run - rss_inputs) / 1e9:.3f} GB: "
          f"{'no copy of the caches' if rss_run - rss_inputs < 0.5 * cache_bytes else 'the caches were copied'})")
    return 0 if best / cpp <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())

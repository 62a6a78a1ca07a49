#!/usr/bin/env python3
"""pao-bench's decode case against a vectorised PyTorch CPU reference, in one run.

The reference is what a kernel engineer writes to check a paged-attention kernel on the CPU:
gather every sequence's K and V blocks through the block table, upcast to float32, then
batched matmuls and a softmax over the whole sequence (vLLM's tests/kernels reference, with the
per-token Python loop replaced by tensor indexing). It runs on the same shapes as pao-bench's
decode case: 8 sequences x 32,768 tokens, 32 query / 8 KV heads, head size 128, block 16, f16
cache in vLLM's layouts, with the same number of threads.

Prints both times and their ratio; --json writes them. Needs torch (pip install torch; not part
of the project's test set-up) and a release build of pao-bench.

    python3 tools/scripts/bench_vs_torch.py --threads 2 --json torch.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pao-bench", default="build/release/tools/pao-bench", help="the pao-bench binary")
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both (OMP_NUM_THREADS)")
    p.add_argument("--repeats", type=int, default=2, help="runs of each; the fastest counts")
    p.add_argument("--json", help="also write the results to this file")
    return p.parse_args()


def torch_reference_seconds(torch, threads, repeats):
    """Best time of the vectorised reference on the bench case's shapes."""
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    num_seqs, seq_len, heads, kv_heads, hs, bs = 8, 32768, 32, 8, 128, 16
    x = 16 // 2  # vLLM's key-cache packing for 2-byte elements
    blocks_per_seq = seq_len // bs
    num_blocks = num_seqs * blocks_per_seq
    bound = hs ** -0.5
    query = (torch.rand(num_seqs, heads, hs, generator=gen) * 2 - 1).mul_(bound).half()
    key_cache = torch.empty(num_blocks, kv_heads, hs // x, bs, x, dtype=torch.float16).uniform_(-bound, bound, generator=gen)
    value_cache = torch.empty(num_blocks, kv_heads, hs, bs, dtype=torch.float16).uniform_(-bound, bound, generator=gen)
    block_tables = torch.randperm(num_blocks, generator=gen).view(num_seqs, blocks_per_seq)
    scale = hs ** -0.5

    def run():
        # [seqs, blocks, kv_heads, hs/x, bs, x] -> [seqs, kv_heads, tokens, hs]
        k = key_cache[block_tables].permute(0, 2, 1, 4, 3, 5).reshape(num_seqs, kv_heads, seq_len, hs).float()
        # [seqs, blocks, kv_heads, hs, bs] -> [seqs, kv_heads, tokens, hs]
        v = value_cache[block_tables].permute(0, 2, 1, 4, 3).reshape(num_seqs, kv_heads, seq_len, hs).float()
        q = query.float().view(num_seqs, kv_heads, heads // kv_heads, hs)
        probs = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * scale, dim=-1)
        return torch.matmul(probs, v).view(num_seqs, heads, hs).half()

    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    assert torch.isfinite(out.float()).all()
    return best


def pao_seconds(binary, threads, repeats):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        subprocess.run([binary, "--cases", "decode", "--repeats", str(repeats), "--json", path], check=True, env=env)
        with open(path) as f:
            results = json.load(f)
    return {r["precision"]: r["seconds"] for r in results["results"] if r["case"] == "decode"}, results["machine"]


def main():
    args = parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("bench_vs_torch.py: needs torch (pip install torch)")
    if not os.access(args.pao_bench, os.X_OK):
        sys.exit(f"bench_vs_torch.py: {args.pao_bench} not found; build it with "
                 "'cmake --preset release && cmake --build --preset release --target pao_bench'")
    print(f"PyTorch {torch.__version__} reference, {args.threads} threads ...", flush=True)
    torch_s = torch_reference_seconds(torch, args.threads, args.repeats)
    print(f"  {torch_s:.3f} s ({8 * 32768 * 8 * 128 * 2 * 2 / torch_s / 1e9:.2f} GB/s of K/V)\n", flush=True)
    pao, machine = pao_seconds(args.pao_bench, args.threads, args.repeats)
    print()
    result = {"threads": args.threads, "torch_version": torch.__version__, "torch_seconds": torch_s,
              "machine": machine, "pao": {}}
    for precision, seconds in sorted(pao.items()):
        ratio = torch_s / seconds
        result["pao"][precision] = {"seconds": seconds, "speedup_vs_torch": ratio}
        print(f"decode {precision:6s}: pao {seconds:.3f} s, PyTorch {torch_s:.3f} s: {ratio:.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()

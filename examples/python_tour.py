"""A tour of the pao Python package (docs/python.md shows its output):

    .venv/bin/python examples/python_tour.py

A vLLM-style decode step through pao.ops on torch tensors, the same step judged by pao.diff against
the case's golden, a real bug (a GQA head mapping off) located, and the simulator's V1-or-V2 answer.
"""
import tempfile

import torch

import pao
from pao import ops

case = {"num_heads": 8, "num_kv_heads": 2, "head_size": 128, "block_size": 16, "dtype": "bf16",
        "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25, "seq_lens": [1, 700, 1300], "seed": 3}
print("case:", pao.cases.describe(case))

# The case's seeded inputs as torch tensors (they share the arrays' memory), and vLLM's call.
g = pao.cases.make_golden(case, outputs="none", like="torch")
c = pao.cases.load(case)
query, key_cache, value_cache = g["query"], g["key_cache"], g["value_cache"]
print("key_cache:", key_cache.dtype, list(key_cache.shape), "(fp8 e4m3 codes, as vLLM stores them)")
num_seqs, num_heads, head_size = query.shape
partitions = (c["max_seq_len"] + 511) // 512
out = torch.empty_like(query)
tmp_out = torch.empty(num_seqs, num_heads, partitions, head_size, dtype=query.dtype)
exp_sums = torch.empty(num_seqs, num_heads, partitions, dtype=torch.float32)
max_logits = torch.empty_like(exp_sums)
scale = head_size**-0.5
ops.paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, 2, scale,
                       g["block_tables"], g["seq_lens"], 16, c["max_seq_len"], None, "fp8_e4m3",
                       torch.tensor(0.5), torch.tensor(0.25))
print("max_logits of seq 0 (one token: partitions 1, 2 are past its end):", max_logits[0, 0].tolist())

with tempfile.TemporaryDirectory() as tmp:
    golden = pao.cases.write_golden(case, tmp)
    report = pao.diff(golden, {"out": out, "tmp_out": tmp_out, "max_logits": max_logits, "exp_sums": exp_sums},
                      reduce=True)
    print("pao.diff:", report.text.strip().splitlines()[-1], "| passed:", report.passed)

    # A real bug: V1 run with the GQA mapping kv_head = head % num_kv_heads, by viewing the caches'
    # heads in the wrong order (query heads 0..7 -> kv heads 0,1,0,1,... instead of 0,0,0,0,1,...).
    wrong = torch.empty_like(query)
    perm = torch.tensor([0, 2, 4, 6, 1, 3, 5, 7])  # query head h computed as head perm[h]
    ops.paged_attention_v1(wrong, query[:, perm].contiguous(), key_cache, value_cache, 2, scale,
                           g["block_tables"], g["seq_lens"], 16, c["max_seq_len"], None, "fp8", 0.5, 0.25)
    wrong = wrong[:, torch.argsort(perm)].contiguous()
    try:
        pao.testing.assert_paged_attention_close(wrong, golden)
    except AssertionError as e:
        lines = str(e).splitlines()
        print("assert_paged_attention_close raised AssertionError:")
        for line in lines:
            if any(k in line for k in ("FAIL", "pattern:", "worst abs", "per head")):
                print("   ", line.strip()[:150])

for seq_len in (4096, 16384):
    times = []
    for kernel in ("v1", "v2:512"):
        r = pao.sim.run(device="bi-v100", kernel=kernel, num_seqs=8, seq_len=seq_len, num_heads=32, num_kv_heads=8,
                        head_size=128, block_size=16, dtype="f16")
        times.append(f"{kernel} {r['time_us']:.0f} us" if r["ok"] else f"{kernel} refused: {r['error']}")
    print(f"pao.sim.run, bi-v100, 8 x {seq_len} tokens:", "; ".join(times))

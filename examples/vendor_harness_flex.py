#!/usr/bin/env python3
"""pao judging a real kernel on this CPU: torch's FlexAttention over its experimental PagedAttention.

    python examples/vendor_harness_flex.py [--goldens DIR] [--outputs DIR] [--pao PATH] [--cases GLOB] [--device cuda]

1. `pao golden --suite examples/cases/flex.json --out GOLDENS` (skipped with --no-generate);
2. for every golden: torch.nn.attention.flex_attention.flex_attention on the paged cache of
   torch.nn.attention.experimental._paged_attention.PagedAttention, eager (no torch.compile):
   - the cache: the suite asks for kv_layout "hnd" ([num_blocks, num_kv_heads, block_size,
     head_size]); to_flex_cache makes it Flex's [1, num_kv_heads, pages x page_size, head_size] with
     one reshape (page = pao's block, page_size = block_size);
   - the page table: PagedAttention's page_table / physical_to_logical / capacity are set from the
     golden's block_tables (the blocks each sequence uses), instead of PagedAttention.reserve()
     allocating its own pages, so that Flex reads the very blocks pao wrote;
   - the semantics as mask / score mods on logical positions: keys [0, seq_len) (decode) or up to
     the query's position (prefix: causal, the new tokens read back from the cache), a sliding
     window keeping the last W keys, ALiBi as slope * (key position - query position), the case's
     softmax scale; GQA by enable_gqa. The logical block mask goes through
     convert_logical_block_mask, the score mod through get_score_mod (physical -> logical);
   - decode runs the batch as Flex's batch with one query row; prefix runs the batch with the
     sequences' new tokens as query rows (padded to the longest; the padding rows are dropped).
   Flex's `out` goes to OUTPUTS/<id>.safetensors, in the golden's dtype;
3. `pao diff GOLDENS OUTPUTS --json OUTPUTS/report.json`, then one line per case;
4. with --evidence, for each FAIL of a golden whose unused slots hold pao's NaN poison: Flex rerun
   with the NaN kept only in blocks no sequence uses, then only past seq_len in the sequences' own
   blocks -- which slots Flex reads.

Needs torch (>= 2.6; the test venv's) and safetensors. Exit status: pao golden's when it fails, else
pao diff's (0 all pass, 1 a mismatch, 2 bad input or torch missing).
"""

import importlib
import pathlib
import sys
import warnings

try:        # imported here for the code below; without it, --help still works (main says what is missing)
    import torch
except ImportError as e:
    torch, TORCH_MISSING = None, e

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from vendor_harness import for_each_case, harness_arguments, judge_torch_kernel  # noqa: E402


class NotInFlexApi(Exception):
    """The case asks for something Flex's API cannot take (the harness says so, Flex is not called)."""


def to_flex_cache(cache, kv_layout):
    """pao's hnd cache [blocks, kv_heads, block_size, head_size] as Flex's [1, kv_heads, blocks x block_size,
    head_size]: physical block b, slot o is Flex's row b * block_size + o. The one place that knows the layout."""
    if kv_layout != "hnd":
        raise NotInFlexApi(f"kv_layout {kv_layout}: this harness converts hnd caches (the suite asks for them)")
    blocks, kv_heads, block_size, head_size = cache.shape
    return cache.permute(1, 0, 2, 3).reshape(1, kv_heads, blocks * block_size, head_size).contiguous()


def paged_attention(case, tensors, device):
    """A PagedAttention whose pages are the golden's blocks: page_table[s, b] = block_tables[s][b] for the
    ceil(seq_len / block_size) blocks each sequence uses."""
    from torch.nn.attention.experimental._paged_attention import PagedAttention
    block_size, lens = case.int("block_size"), case.ints("seq_lens")
    num_blocks = tensors["key_cache"].shape[0]
    pa = PagedAttention(n_pages=num_blocks, page_size=block_size, max_batch_size=len(lens), device=device)
    tables = tensors["block_tables"].to(device=device, dtype=torch.int64)
    for s, n in enumerate(lens):
        used = -(-n // block_size)
        pages = tables[s, :used]
        pa.page_table[s, :used] = pages
        pa.physical_to_logical[s, pages] = torch.arange(used, dtype=torch.int64, device=device)
        pa.capacity[s] = used * block_size
    return pa


def run_flex(case, tensors, device):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if case.spec.get("kv_cache_dtype", "auto") != "auto":
        raise NotInFlexApi("a quantised cache: Flex attends unquantised caches only")
    if case.float("soft_cap") if "soft_cap" in case.meta else 0:
        raise NotInFlexApi("soft-cap is not in this harness's score mod")
    block_size, lens = case.int("block_size"), case.ints("seq_lens")
    window = int(case.meta.get("sliding_window", "0") or 0)
    scale = case.float("scale")
    k_cache = to_flex_cache(tensors["key_cache"].to(device), case.meta["kv_layout"])
    v_cache = to_flex_cache(tensors["value_cache"].to(device), case.meta["kv_layout"])
    pa = paged_attention(case, tensors, device)
    seq_len = torch.tensor(lens, dtype=torch.int64, device=device)
    slopes = tensors["alibi_slopes"].to(device=device, dtype=torch.float32) if case.flag("alibi") else None
    query = tensors["query"].to(device)
    num_seqs, num_heads, head_size = len(lens), query.shape[1], query.shape[2]
    prefix = case.kernel == "prefix"
    if prefix:
        starts = case.ints("query_start_loc") or tensors["query_start_loc"].tolist()
        qlen = torch.tensor([starts[s + 1] - starts[s] for s in range(num_seqs)], dtype=torch.int64, device=device)
        rows = max(1, int(qlen.max()))
        q = torch.zeros(num_seqs, num_heads, rows, head_size, dtype=query.dtype, device=device)
        for s in range(num_seqs):
            q[s, :, : qlen[s]] = query[starts[s]: starts[s + 1]].transpose(0, 1)
        first = seq_len - qlen                                   # the position of each first new token
    else:
        qlen = torch.ones(num_seqs, dtype=torch.int64, device=device)
        rows = 1
        q = query.unsqueeze(2)                                   # [seqs, heads, 1, head_size]
        first = seq_len - 1

    def mask_mod(b, h, q_idx, kv_idx):                           # logical key positions
        pos = first[b] + q_idx
        keep = (kv_idx <= pos) & (kv_idx < seq_len[b]) & (q_idx < qlen[b])
        if window > 0:
            keep = keep & (kv_idx > pos - window)
        return keep

    def score_mod(score, b, h, q_idx, kv_idx):
        if slopes is None:
            return score
        return score + slopes[h] * (kv_idx - (first[b] + q_idx)).to(torch.float32)

    logical_len = max(1, -(-max(lens) // block_size)) * block_size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # "flex_attention called without torch.compile()"
        logical = create_block_mask(mask_mod, num_seqs, None, rows, logical_len, device=device,
                                    BLOCK_SIZE=block_size)
        mask = pa.convert_logical_block_mask(logical, kv_len=seq_len)
        out = flex_attention(q, k_cache, v_cache, block_mask=mask, score_mod=pa.get_score_mod(score_mod, seq_len),
                             scale=scale, enable_gqa=num_heads != k_cache.shape[1])
    if prefix:
        out = torch.cat([out[s, :, : qlen[s]].transpose(0, 1) for s in range(num_seqs)])
    else:
        out = out[:, :, 0]
    return {"out": out.to(dtype=tensors["out"].dtype, device="cpu")}


def poison_evidence(case, tensors, device):
    """Where Flex reads the NaN of a poisoned golden from: Flex rerun on copies of the caches with NaN
    kept only in blocks no sequence uses (slots no query may see, of other pages), then only past
    seq_len inside the sequences' own blocks; the NaN elements of `out` per sequence, each time."""
    lens, bs = case.ints("seq_lens"), case.int("block_size")
    used = set()
    for s, n in enumerate(lens):
        used |= set(tensors["block_tables"][s, : -(-n // bs)].tolist())
    lines = []
    for where, keep in (("blocks no sequence uses", lambda b: b not in used),
                        ("the sequences' own blocks, past seq_len", lambda b: b in used)):
        copy = dict(tensors)
        for name in ("key_cache", "value_cache"):
            cache = tensors[name].clone()
            for b in range(cache.shape[0]):
                if not keep(b):
                    cache[b] = torch.nan_to_num(cache[b], nan=0.0)
            copy[name] = cache
        out = run_flex(case, copy, device)["out"]
        rows = [int(torch.isnan(out[r]).any(dim=-1).sum()) for r in range(out.shape[0])]
        lines.append(f"NaN only in {where}: {int(torch.isnan(out).sum())} of {out.numel()} elements of out "
                     f"are NaN ({sum(1 for r in rows if r)} of {len(rows)} rows)")
    return lines


def main(argv=None):
    parser = harness_arguments(__doc__, "flex", "flex")
    parser.add_argument("--evidence", action="store_true",
                        help="for each FAIL of a poisoned golden: Flex rerun with the NaN only in blocks no "
                             "sequence uses, then only past seq_len in the sequences' blocks")
    args = parser.parse_args(argv)
    if torch is None:   # bad input (exit 2), not a mismatch (1): said before any golden is written
        print(f"vendor_harness_flex: error: {TORCH_MISSING}: this harness needs torch >= 2.6 and safetensors",
              file=sys.stderr)
        return 2
    try:
        importlib.import_module("torch.nn.attention.experimental._paged_attention")
    except ImportError as e:
        print(f"vendor_harness_flex: error: torch {torch.__version__} has no PagedAttention ({e}): "
              "it needs torch >= 2.6", file=sys.stderr)
        return 2
    status, rep, device = judge_torch_kernel(args, "FlexAttention + PagedAttention (eager)", "flex", run_flex,
                                             NotInFlexApi, "Flex's API", "Flex")
    if rep is None:
        return status
    if args.evidence:
        for case, tensors in for_each_case(args.goldens, args.cases):
            failed = any(c["case_id"] == case.id and c["status"] == "FAIL" for c in rep["cases"])
            if failed and case.spec.get("poison_unused", True):
                print(f"\n{case.id}")
                for line in poison_evidence(case, tensors, device):
                    print("  " + line)
    return status


if __name__ == "__main__":
    sys.exit(main())

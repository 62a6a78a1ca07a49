#!/usr/bin/env python3
"""pao judging torch's scaled_dot_product_attention on a gathered paged cache (CPU, or a GPU with --device cuda).

    python examples/vendor_harness_sdpa.py [--goldens DIR] [--outputs DIR] [--pao PATH] [--cases GLOB] [--device cuda]

The paged part is this harness's (one gather of each sequence's blocks, vendor_harness.gather, the one place that
knows pao's three cache layouts); the attention is torch.nn.functional.scaled_dot_product_attention, the kernel torch
picks for the call on that device (on a GPU: flash or memory-efficient attention, or the math path when a float mask
rules those out):
1. `pao golden --suite examples/cases/flex.json --out GOLDENS` (skipped with --no-generate): the suite the Flex
   harness uses (decode and chunked prefill, f32 / bf16 / f16, MHA and GQA, ALiBi, sliding windows);
2. for every golden, per sequence: the tokens [0, seq_len) of its blocks gathered in the cache's dtype, on the device,
   then SDPA with query rows [1, heads, rows, head_size] against [1, kv_heads, seq_len, head_size] (enable_gqa), the
   case's scale, and
   - decode: one query row, no mask (every gathered key is visible), unless the case has ALiBi or a window;
   - prefix: the new tokens as query rows, causal from the first new token's position (a boolean mask), the new
     tokens' K/V read back from the cache (new_kv_source "cache", as the suite asks);
   - ALiBi as a float mask slope * (key position - query position) added to the scaled scores, a sliding window
     keeping the last W keys;
   SDPA's `out` goes to OUTPUTS/<id>.safetensors in the golden's dtype;
3. `pao diff GOLDENS OUTPUTS --json OUTPUTS/report.json`, then one line per case.
Soft-capping and quantised caches are not in SDPA's API: such cases are reported as not run, with the reason.

Needs torch (>= 2.5, for enable_gqa) and safetensors. Exit status: pao golden's when it fails, else pao diff's (0 all
pass, 1 a mismatch, 2 bad input or torch missing).
"""

import pathlib
import sys

try:        # imported here for the code below; without it, --help still works (main says what is missing)
    import torch
except ImportError as e:
    torch, TORCH_MISSING = None, e

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from vendor_harness import gather, harness_arguments, judge_torch_kernel, new_kv_from_cache  # noqa: E402


class NotInSdpaApi(Exception):
    """The case asks for something SDPA's API cannot take (the harness says so, SDPA is not called)."""


def run_sdpa(case, tensors, device):
    import torch.nn.functional as F
    if case.spec.get("kv_cache_dtype", "auto") != "auto":
        raise NotInSdpaApi("a quantised cache: SDPA attends unquantised tensors")
    if (case.float("soft_cap") if "soft_cap" in case.meta else 0) > 0:
        raise NotInSdpaApi("soft-capping: SDPA has no score modification")
    prefix = case.kernel == "prefix"
    if prefix and not new_kv_from_cache(case):
        raise NotInSdpaApi("new_kv_source input: this harness reads every key back from the cache")
    layout, block_size = case.meta["kv_layout"], case.int("block_size")
    window = int(case.meta.get("sliding_window", "0") or 0)
    scale = case.float("scale")
    query = tensors["query"].to(device)
    key_cache, value_cache = tensors["key_cache"].to(device), tensors["value_cache"].to(device)
    tables = tensors["block_tables"].to(device=device, dtype=torch.int64)
    slopes = tensors["alibi_slopes"].to(device=device, dtype=torch.float32) if case.flag("alibi") else None
    lens = case.ints("seq_lens")
    starts = (case.ints("query_start_loc") or tensors["query_start_loc"].tolist()) if prefix else list(range(len(lens) + 1))
    out = torch.zeros_like(query)
    for s, n in enumerate(lens):
        a, b = starts[s], starts[s + 1]
        if b == a or n == 0:
            continue
        blocks = tables[s, : -(-n // block_size)]
        k = gather(key_cache, layout, "key", blocks, n).transpose(0, 1)[None]      # [1, kv_heads, n, head_size]
        v = gather(value_cache, layout, "value", blocks, n).transpose(0, 1)[None]
        q = query[a:b].transpose(0, 1)[None]                                       # [1, heads, rows, head_size]
        qpos = torch.arange(n - (b - a), n, device=device)[:, None]
        kpos = torch.arange(n, device=device)[None, :]
        visible = kpos <= qpos
        if window > 0:
            visible = visible & (qpos - kpos < window)
        mask = None
        if slopes is not None:          # a float mask: the bias, and -inf where not visible
            bias = slopes[:, None, None] * (kpos - qpos).to(torch.float32)[None]
            mask = bias.masked_fill(~visible[None], float("-inf"))[None].to(q.dtype)
        elif prefix or window > 0:
            mask = visible[None, None]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=k.shape[1] != q.shape[1])
        out[a:b] = o[0].transpose(0, 1)
    return {"out": out.to(dtype=tensors["out"].dtype, device="cpu")}


def main(argv=None):
    parser = harness_arguments(__doc__, "sdpa", "flex")
    args = parser.parse_args(argv)
    if torch is None:   # bad input (exit 2), not a mismatch (1): said before any golden is written
        print(f"vendor_harness_sdpa: error: {TORCH_MISSING}: this harness needs torch >= 2.5 and safetensors",
              file=sys.stderr)
        return 2
    return judge_torch_kernel(args, "scaled_dot_product_attention", "sdpa", run_sdpa, NotInSdpaApi, "SDPA's API",
                              "SDPA")[0]


if __name__ == "__main__":
    sys.exit(main())

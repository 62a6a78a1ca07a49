#!/usr/bin/env python3
"""pao judging a real vendor kernel on this CPU: Intel Extension for PyTorch's paged attention.

    python examples/vendor_harness_ipex.py [--goldens DIR] [--outputs DIR] [--pao PATH] [--evidence]

1. `pao golden --suite examples/cases/ipex.json --out GOLDENS` (skipped with --no-generate);
2. for every golden: ipex.llm.modules.PagedAttention -- single_query_cached_kv_attention (decode),
   flash_attn_varlen_func (chunked prefill, block tables) or reshape_and_cache (the cache write) --
   on the golden's inputs. The suite asks for IPEX's own cache layout (kv_layout "hnd": [num_blocks,
   num_kv_heads, block_size, head_size]), so the caches go in as pao wrote them (to_ipex_cache, the
   one place that knows the golden's layout, would permute "nhd" or "vllm" goldens), and for IPEX's
   prefill convention (new_kv_source "cache": the new tokens' K/V read back from the cache). Its
   `out` -- for reshape_and_cache goldens the key_cache / value_cache it wrote into copies of the
   golden's pools before, slot_mapping as vLLM's CPU backend passes it (i32, the -1 padding rows
   included) -- goes to OUTPUTS/<id>.safetensors, or IPEX's exception to OUTPUTS/<id>.error. Each
   pool copy sits between two guard blocks, so that a write past either end is seen (and noted)
   instead of hitting the heap: pao diff sees only the tensor;
3. `pao diff GOLDENS OUTPUTS --json OUTPUTS/report.json`, then one line per case;
4. with --evidence: first reference64 -- the same attention in float64 with plain torch from the
   golden's inputs, its own gather of the paged cache, independent of pao and of to_ipex_cache --
   against pao's out_exact on EVERY case (a check of the reference itself, layout included); then,
   for each case that FAILs with outputs, IPEX against reference64 under the case's semantics and
   under a few alternatives (fp8 scales ignored, window off or one off, soft-cap off, the prefix's
   new tokens from the other source, ...), to say whether IPEX or pao is wrong, and what IPEX
   computed instead. For reshape_and_cache: torch_write -- vLLM's write in plain torch, torch's own
   fp8 conversion -- against pao's key_cache / value_cache on EVERY such case, bit for bit; then, for
   each that FAILs, which of a few conversions (correctly rounded, rounded twice through f16, the
   scale ignored) IPEX's codes are, and where each row written outside the mapped slots came from.

Needs torch and intel-extension-for-pytorch (docs/vendor-guide.md: install into a venv outside the
repository). Exit status: pao golden's when it fails, else pao diff's (0 all pass, 1 a mismatch,
2 bad input); 1 also when --evidence finds reference64 or torch_write disagreeing with pao.
"""

import fnmatch
import importlib.util
import io
import json
import math
import os
import pathlib
import re
import sys
import warnings
from contextlib import redirect_stderr

try:        # imported here for the code below; without it, --help still works (main says what is missing)
    import torch
except ImportError as e:
    torch, TORCH_MISSING = None, e

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from vendor_harness import (diff_report, find_pao, first_lines, for_each_case, harness_arguments,  # noqa: E402
                            new_kv_from_cache, out_verdict_line, print_verdicts, reference64, run_each_case,
                            run_pao_golden)

_ipex = None


def ipex():
    """intel_extension_for_pytorch, imported once (its import chatter on stderr is dropped)."""
    global _ipex
    if _ipex is None:
        sys.stderr.flush()
        saved = os.dup(2)                       # C++ warnings go to fd 2 directly
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            try:
                with warnings.catch_warnings(), redirect_stderr(io.StringIO()):
                    warnings.simplefilter("ignore")
                    import intel_extension_for_pytorch
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        _ipex = intel_extension_for_pytorch
    return _ipex


# ---------------------------------------------------------------------------------------------
# Layout: the ONE function that knows how the golden stores its caches. pao writes kv_layout
# "vllm", "nhd" or "hnd"; this suite asks for "hnd", IPEX's own, so the golden's cache is used as it
# is (contiguous() copies nothing). The other two are kept for goldens of other suites.
# ---------------------------------------------------------------------------------------------
def to_ipex_cache(cache, kv_layout, which):
    """A golden cache -> IPEX's [num_blocks, num_kv_heads, block_size, head_size], contiguous."""
    if kv_layout == "hnd":      # already IPEX's
        return cache.contiguous()
    if kv_layout == "nhd":      # [num_blocks, block_size, num_kv_heads, head_size]
        return cache.permute(0, 2, 1, 3).contiguous()
    if kv_layout == "vllm":
        if which == "key":      # [num_blocks, num_kv_heads, head_size / x, block_size, x]
            b, h, hx, bs, x = cache.shape
            return cache.permute(0, 1, 3, 2, 4).reshape(b, h, bs, hx * x).contiguous()
        return cache.permute(0, 1, 3, 2).contiguous()   # [num_blocks, num_kv_heads, head_size, block_size]
    raise ValueError(f"unknown kv_layout '{kv_layout}'")


# pao's kv_cache_dtype -> the string vLLM's CPU backend hands IPEX's flash_attn_varlen_func. IPEX's
# "fp8" means e5m2. (Its reshape_and_cache call passes neither this nor the scales, only
# slot_mapping.flatten().int(); the harness passes the case's, which IPEX's API accepts.)
KV_CACHE_DTYPE = {"auto": "auto", "fp8_e5m2": "fp8_e5m2", "fp8_e4m3": "fp8_e4m3"}


def ipex_window_decode(w):
    """pao: a query sees the last W positions (itself included), 0 = off. IPEX decode keeps tokens
    [context_len - window_size, context_len): the same W; -1 = off."""
    return w if w > 0 else -1


def ipex_window_left_prefill(w):
    """IPEX prefill (flash_attn_varlen_func) keeps keys k >= q - window_size_left: W - 1; -1 = off."""
    return w - 1 if w > 0 else -1


def ipex_softcap(cap):
    return cap if cap > 0 else -1.0     # IPEX: -1 = off; pao: 0 = off


def new_token_slots(case, tensors):
    """slot_mapping (block * block_size + offset) of every new token of a prefix case, i32."""
    bs = case.int("block_size")
    qsl = tensors["query_start_loc"].tolist()
    slots = []
    for s, n in enumerate(tensors["seq_lens"].tolist()):
        qlen = qsl[s + 1] - qsl[s]
        for pos in range(n - qlen, n):
            slots.append(int(tensors["block_tables"][s, pos // bs]) * bs + pos % bs)
    return torch.tensor(slots, dtype=torch.int32)


FP8 = (torch.float8_e4m3fn, torch.float8_e5m2) if torch else ()


def bits(t):
    """The same memory as unsigned bytes / int16 / int32: compared, indexed and copied bit for bit
    (torch 2.8 cannot index fp8 tensors on the CPU, and NaN != NaN)."""
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()])


def from_ipex_cache(cache, like, kv_layout, which):
    """The inverse of to_ipex_cache: an IPEX-layout cache back to the golden's layout (shaped like `like`)."""
    b = bits(cache)
    if kv_layout == "hnd":
        out = b
    elif kv_layout == "nhd":
        out = b.permute(0, 2, 1, 3).contiguous()
    elif kv_layout == "vllm" and which == "key":
        nb, h, hx, bs, x = like.shape
        out = b.reshape(nb, h, bs, hx, x).permute(0, 1, 3, 2, 4).contiguous()
    elif kv_layout == "vllm":
        out = b.permute(0, 1, 3, 2).contiguous()
    else:
        raise ValueError(f"unknown kv_layout '{kv_layout}'")
    return out.view(cache.dtype)


def poison(cache, slots, block_size):
    """NaN into the given slots of an IPEX-layout cache (bit pattern 0x7f is NaN in e4m3fn and e5m2)."""
    blocks, offsets = slots.long() // block_size, slots.long() % block_size
    if cache.dtype in FP8:
        bits(cache)[blocks, :, offsets, :] = 0x7F
    else:
        cache[blocks, :, offsets, :] = float("nan")


def ipex_reshape_and_cache(case, tensors, key_cache, value_cache):
    """Prefix cases under --cache-writes ipex: IPEX's reshape_and_cache of the new tokens into
    (poisoned copies of) the caches, in place."""
    slots = new_token_slots(case, tensors)
    poison(key_cache, slots, case.int("block_size"))
    poison(value_cache, slots, case.int("block_size"))
    ipex().llm.modules.PagedAttention.reshape_and_cache(
        tensors["key"], tensors["value"], key_cache, value_cache, slots,
        KV_CACHE_DTYPE[case.meta["kv_cache_dtype"]], case.float("k_scale"), case.float("v_scale"))


# ---------------------------------------------------------------------------------------------
# reshape_and_cache goldens: pao diff judges the written pools bit for bit. The harness adds what
# pao cannot see -- writes OUTSIDE the tensors, caught by a guard around each cache -- and, as
# evidence, its own torch conversions: which one IPEX's codes are, and where each stray row came from.
# ---------------------------------------------------------------------------------------------
GUARD_BYTE = 0x5A


def guarded_copy(cache):
    """A copy of an IPEX-layout cache in the middle of a larger buffer: one block of guard elements on
    each side, every byte GUARD_BYTE. A write past either end lands in the guard, where the harness sees
    it, instead of in the heap. Returns (buffer, the cache view into it, guard elements per side)."""
    guard = cache[0].numel()
    buf = torch.empty(cache.numel() + 2 * guard, dtype=cache.dtype)
    buf.view(torch.uint8).fill_(GUARD_BYTE)
    view = buf[guard:guard + cache.numel()].view(cache.shape)
    bits(view).copy_(bits(cache))
    return buf, view, guard


def f32(x):
    """A metadata float (the shortest decimal of an f32) as that f32."""
    return float(torch.tensor(x, dtype=torch.float32))


def conversions(case, cache_dtype):
    """{name: x -> the codes a write of x stores} for the conversions a cache write might use: the
    case's (vLLM's: fp8(float(x) / scale), one fp32 division, rounded once) first."""
    if cache_dtype not in FP8:
        return {"x in the cache's dtype (pao, vLLM)": lambda x, s: x.to(cache_dtype)}
    div = lambda x, s: x.float() / torch.full_like(x.float(), s) if s != 1 else x.float()  # noqa: E731
    conv = {
        "fp8(x / scale), correctly rounded (pao, vLLM)": lambda x, s: div(x, s).to(cache_dtype),
        "fp8(f16(x / scale)): rounded twice, through f16": lambda x, s: div(x, s).half().to(cache_dtype),
    }
    if case.float("k_scale") != 1 or case.float("v_scale") != 1:
        conv["fp8(x): the scale ignored"] = lambda x, s: x.float().to(cache_dtype)
        conv["fp8(f16(x)): the scale ignored, rounded twice through f16"] = lambda x, s: x.float().half().to(cache_dtype)
    return conv


def torch_write(case, tensors, which):
    """vLLM's reshape_and_cache in plain torch, apart from pao: the golden's pool before, the rows of
    slot >= 0 replaced by the case's conversion, the -1 rows skipped. IPEX layout."""
    layout, bs = case.meta["kv_layout"], case.int("block_size")
    cache = to_ipex_cache(tensors[which + "_cache_before"], layout, which).clone()
    slots = tensors["slot_mapping"].long()
    rows = (slots >= 0).nonzero().flatten()
    conv = next(iter(conversions(case, cache.dtype).values()))
    codes = conv(tensors[which][rows], f32(case.float(("k" if which == "key" else "v") + "_scale")))
    bits(cache)[slots[rows] // bs, :, slots[rows] % bs, :] = bits(codes)
    return cache


def locate_row(case, tensors, which, row_codes, candidates):
    """(token, kv head, conversion) whose converted row of key/value is exactly row_codes, or None."""
    x = tensors[which]
    scale = f32(case.float(("k" if which == "key" else "v") + "_scale"))
    for name, conv in candidates.items():
        hit = (bits(conv(x, scale)) == row_codes).all(-1).nonzero()
        if len(hit):
            return int(hit[0, 0]), int(hit[0, 1]), name
    return None


def ipex_slot_offset(slot, bs, strides, head):
    """Where IPEX's kernel writes (token slot, kv head), in elements from the cache's start: its
    physical_block_id = slot / block_size and block_offset = slot % block_size, in C++ (truncating)."""
    block = int(slot / bs)                 # C++ truncates toward zero: -1 / 16 = 0
    offset = slot - block * bs             # and -1 % 16 = -1
    return block * strides[0] + head * strides[1] + offset * strides[2]


def reshape_findings(case, tensors, written):
    """After IPEX's write: (a note for every run, evidence lines). written: {which: (buffer, view, guard)}."""
    bs, hs = case.int("block_size"), case.int("head_size")
    slots = tensors["slot_mapping"].long()
    mapped = slots[slots >= 0]
    note, lines, verdict = [], [], {}
    for which, (buf, view, guard) in written.items():
        candidates = conversions(case, view.dtype)
        es, n = view.element_size(), view.numel()
        strides = view.stride()[:3]
        # 1. The mapped slots, against the harness's own conversions.
        got = bits(view)[mapped // bs, :, mapped % bs, :]
        x = tensors[which][slots >= 0]
        scale = f32(case.float(("k" if which == "key" else "v") + "_scale"))
        per = {name: int((bits(conv(x, scale)) != got).sum()) for name, conv in candidates.items()}
        first = next(iter(per))
        everywhere = [name for name, d in per.items() if d == 0]
        line = f"{which}_cache, the {got.numel()} elements of the {len(mapped)} mapped slots: {per[first]} differ from {first}"
        verdict.setdefault("codes", set()).add(everywhere[0] if everywhere else "none of the conversions tried")
        if everywhere:
            line += "; IPEX's codes are, everywhere, " + " = ".join(everywhere)
        elif len(per) > 1:
            line += "; IPEX's codes match none of the conversions everywhere (" + ", ".join(
                f"{name}: {d} differ" for name, d in per.items()) + ")"
        lines.append(line)
        # 2. Rows outside the mapped slots, inside the tensor and in the guard, with where each came from.
        before = bits(to_ipex_cache(tensors[which + "_cache_before"], case.meta["kv_layout"], which)).flatten()
        flat = bits(buf).flatten()
        changed_in = (flat[guard:guard + n] != before).nonzero().flatten()
        keep = torch.ones(view.shape[:3], dtype=torch.bool)
        keep[mapped // bs, :, mapped % bs] = False            # [block, kv head, offset] rows not mapped
        stray_in = changed_in[keep.flatten()[changed_in // hs]]
        byte_changed = (buf.view(torch.uint8).reshape(-1, es) != GUARD_BYTE).any(1)
        outside = torch.cat([byte_changed[:guard].nonzero().flatten(),
                             byte_changed[guard + n:].nonzero().flatten() + n + guard]) - guard
        for label, idx in (("inside the tensor, at slots no token maps to", stray_in),
                           ("OUTSIDE the tensor (the harness's guard; invisible to pao diff)", outside)):
            if not len(idx):
                continue
            rows = torch.unique(torch.div(idx, hs, rounding_mode="floor"))
            verdict.setdefault("outside" if label.startswith("OUTSIDE") else "stray", []).append(f"{which} {len(idx)}")
            if label.startswith("OUTSIDE"):
                where = ", ".join(f"elements {int(r) * hs}..{int(r) * hs + hs - 1}" for r in rows[:4])
                note.append(f"IPEX wrote {len(idx)} {which}_cache element(s) outside the tensor ({where} "
                            f"from its first element): out-of-bounds writes, caught by the harness's guard")
            lines.append(f"{which}_cache, {len(idx)} element(s) written {label}, {len(rows)} row(s) of {hs}:")
            for r in rows[:6]:
                start = int(r) * hs
                pos = (f"element offset {start}" if start < 0 or start >= n else
                       f"block {start // strides[0]}, kv head {start % strides[0] // strides[1]}, "
                       f"offset {start % strides[1] // strides[2]}")
                row_codes = flat[guard + start:guard + start + hs]
                src = locate_row(case, tensors, which, row_codes, candidates)
                if src is None:
                    lines.append(f"    {pos}: matches no row of {which} under any conversion tried")
                    continue
                t, h, conv = src
                s = int(slots[t])
                placed = ipex_slot_offset(s, bs, strides, h) == start
                short = conv.replace(" (pao, vLLM)", "").split(":")[0]
                lines.append(f"    {pos}: {which}[{t}] (slot {s}{', a padding row' if s < 0 else ''}), kv head {h}, "
                             f"as {short}"
                             + (f" -- where IPEX's C++ slot arithmetic puts slot {s} (block {int(s / bs)}, "
                                f"offset {s - int(s / bs) * bs}): it does not skip slot < 0" if placed and s < 0 else ""))
            if len(rows) > 6:
                lines.append(f"    ... {len(rows) - 6} more")
    summary = "=> at the mapped slots IPEX's codes are " + " / ".join(sorted(verdict["codes"]))
    if "stray" in verdict:
        summary += "; written at unmapped slots: " + ", ".join(verdict["stray"])
    if "outside" in verdict:
        summary += "; written OUTSIDE the tensors: " + ", ".join(verdict["outside"])
    lines.append(summary)
    return "; ".join(note), lines


def run_ipex_reshape(case, tensors):
    """IPEX's reshape_and_cache on a reshape_and_cache golden: the pools it writes, and the findings."""
    layout = case.meta["kv_layout"]
    written = {which: guarded_copy(to_ipex_cache(tensors[which + "_cache_before"], layout, which))
               for which in ("key", "value")}
    # vLLM's CPU backend hands IPEX slot_mapping.flatten().int(), its -1 padding rows included.
    slots = tensors["slot_mapping"].to(torch.int32)
    ipex().llm.modules.PagedAttention.reshape_and_cache(
        tensors["key"], tensors["value"], written["key"][1], written["value"][1], slots,
        KV_CACHE_DTYPE[case.meta["kv_cache_dtype"]], case.float("k_scale"), case.float("v_scale"))
    outputs = {which + "_cache": from_ipex_cache(w[1], tensors[which + "_cache_before"], layout, which)
               for which, w in written.items()}
    note, lines = reshape_findings(case, tensors, written)
    return outputs, note, lines


class NotInIpexApi(Exception):
    """A case IPEX's API has no way to be asked (the harness says so; IPEX is not called)."""


def run_ipex(case, tensors, cache_writes):
    """IPEX on one golden: ({output name: tensor}, a note, evidence lines)."""
    if case.kernel == "reshape_and_cache":
        return run_ipex_reshape(case, tensors)
    pa = ipex().llm.modules.PagedAttention
    layout = case.meta["kv_layout"]
    query = tensors["query"].contiguous()
    kc = to_ipex_cache(tensors["key_cache"], layout, "key")
    vc = to_ipex_cache(tensors["value_cache"], layout, "value")
    block_tables = tensors["block_tables"].contiguous()
    seq_lens = tensors["seq_lens"].contiguous()
    alibi = tensors.get("alibi_slopes") if case.flag("alibi") else None
    scale, ks, vs = case.float("scale"), case.float("k_scale"), case.float("v_scale")
    window, cap = case.int("sliding_window"), case.float("soft_cap")
    if case.spec.get("k_head_scales") or case.spec.get("v_head_scales"):
        raise NotInIpexApi("per-KV-head fp8 scales (k_head_scales / v_head_scales): IPEX's API takes "
                           "one float k_scale and v_scale per call")
    out = torch.empty_like(query)
    if case.kernel == "decode":
        num_heads, num_kv_heads = query.shape[1], kc.shape[1]
        head_mapping = (torch.arange(num_heads) // (num_heads // num_kv_heads)).to(torch.int32)
        pa.single_query_cached_kv_attention(
            out, query, kc, vc, head_mapping, scale, block_tables, seq_lens,
            case.int("block_size"), case.int("max_seq_len"), alibi,
            ipex_window_decode(window), ks, vs, ipex_softcap(cap))
    else:
        kv_dtype = KV_CACHE_DTYPE[case.meta["kv_cache_dtype"]]
        if cache_writes == "ipex":   # attention reads what IPEX's reshape_and_cache wrote for the new tokens
            kc, vc = kc.clone(), vc.clone()
            ipex_reshape_and_cache(case, tensors, kc, vc)
        qsl = tensors["query_start_loc"].contiguous()
        cu_kv = torch.zeros(len(seq_lens) + 1, dtype=torch.int32)
        cu_kv[1:] = torch.cumsum(seq_lens, 0)
        qlens = (qsl[1:] - qsl[:-1]).tolist()
        pa.flash_attn_varlen_func(
            out, query, kc, vc, qsl, cu_kv, max(qlens), int(seq_lens.max()), scale, True,
            block_tables, alibi, ipex_window_left_prefill(window), -1, kv_dtype, ks, vs,
            ipex_softcap(cap))
    return {"out": out}, "", []




def alternatives(case):
    """(name, overrides of reference64, what a match means) of the semantics IPEX might have
    implemented instead of the case's."""
    fp8 = case.meta["kv_cache_dtype"] != "auto"
    scaled = fp8 and (case.float("k_scale") != 1 or case.float("v_scale") != 1)
    defect = "an IPEX defect"
    alts = [("as specified", {}, "")]
    other = None      # prefix on fp8: the new tokens from the other source than the case's
    if case.kernel == "prefix" and fp8:
        if new_kv_from_cache(case):
            other = ("new tokens from key/value, unquantised (new_kv_source input)", {"new_from_cache": False},
                     "IPEX skips the fp8 round trip of the new tokens that its API implies (vLLM's Triton "
                     "convention, not the case's)")
        else:
            other = ("new tokens read back from the fp8 cache (new_kv_source cache)", {"new_from_cache": True},
                     "not an IPEX defect: the golden's convention is not IPEX's -- the case says "
                     "new_kv_source input (vLLM's Triton kernel), IPEX's prefill reads every key from the "
                     "cache; regenerate it with \"new_kv_source\": \"cache\"")
        alts.append(other)
    if scaled:
        alts.append(("k_scale, v_scale ignored", {"k_scale": 1.0, "v_scale": 1.0},
                     defect + ": the fp8 scales are accepted and dropped"))
        if other:
            alts.append(("k_scale, v_scale ignored, " + other[0], {"k_scale": 1.0, "v_scale": 1.0, **other[1]},
                         defect + ": the fp8 scales are accepted and dropped; and " + other[2]))
    w = case.int("sliding_window")
    if w > 0:
        alts.append(("no sliding window", {"window": 0}, defect + ": the window is not applied"))
        alts.append((f"window {w + 1}", {"window": w + 1}, defect + ": the window is one token too wide"))
        if w > 1:
            alts.append((f"window {w - 1}", {"window": w - 1},
                         defect + ": the window is one token too narrow"))
    if case.float("soft_cap") > 0:
        alts.append(("no soft-cap", {"soft_cap": 0.0}, defect + ": the soft-cap is not applied"))
    if case.flag("alibi"):
        alts.append(("no ALiBi", {"alibi": False}, defect + ": ALiBi is not applied"))
    return alts


def rows_of(case, tensors):
    """For each output row: its sequence (decode: the row; prefix: from query_start_loc)."""
    if case.kernel == "decode":
        return list(range(tensors["query"].shape[0]))
    qsl = tensors["query_start_loc"].tolist()
    return [s for s in range(len(qsl) - 1) for _ in range(qsl[s + 1] - qsl[s])]


def evidence(case, tensors, actual):
    """Lines of evidence for one failing case."""
    lines = []
    base = reference64(case, tensors)
    scale_ref = float(base.abs().max()) or 1.0
    exact = tensors["out_exact"]
    pao_vs_ref = float((exact - base).abs().max())
    kernels = [tensors[n] for n in ("v1.out", "v2.out", "prefix.out") if n in tensors]
    kern = kernels[0]
    noise = max(float((k.to(torch.float64) - exact).abs().max()) for k in kernels)
    a = actual.to(torch.float64)
    nan_rows = torch.isnan(a).flatten(1).any(1)
    lines.append(f"float64 reference (plain torch, from the golden's inputs): max|ref| {scale_ref:.3e}")
    lines.append(f"  pao's out_exact vs it: max abs {pao_vs_ref:.3e}"
                 f"  -> {'pao agrees' if pao_vs_ref <= 1e-9 * scale_ref else 'pao DISAGREES'}")
    unit = {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}[kern.dtype]
    noise = max(noise, unit * scale_ref)     # at least one rounding of the largest output
    lines.append(f"  legitimate error (pao's kernel precision vs exact, at least one rounding): {noise:.3e}")
    if bool(nan_rows.any()):
        seqs = sorted({rows_of(case, tensors)[i] for i in nan_rows.nonzero().flatten().tolist()})
        lens = tensors["seq_lens"].tolist()
        lines.append(f"  IPEX's out has NaN/Inf in {int(nan_rows.sum())} row(s): seqs "
                     + ", ".join(f"{s} (seq_len {lens[s]})" for s in seqs))
    best = None
    for name, overrides, meaning in alternatives(case):
        ref = base if not overrides else reference64(case, tensors, **overrides)
        err = torch.nan_to_num((a - ref).abs(), nan=math.inf).flatten(1).amax(1)
        worst = float(err.max())
        # The legitimate error scales with the output: an alternative whose outputs are larger (fp8
        # scales dropped: K x 2, V x 4) allows proportionally more.
        noise_alt = noise * max(1.0, float(ref.abs().max()) / scale_ref)
        per_seq = {}
        for i, s in enumerate(rows_of(case, tensors)):
            per_seq[s] = max(per_seq.get(s, 0.0), float(err[i]))
        seqs = " ".join(f"s{s}:{e:.1e}" for s, e in per_seq.items())
        grown = f", scaled {noise_alt / noise:.2f}x with this output's size" if noise_alt > noise else ""
        lines.append(f"  IPEX vs float64 [{name}]: max abs {worst:.3e} ({worst / noise_alt:.1f}x "
                     f"the legitimate error{grown}); per seq {seqs}")
        if best is None or worst / noise_alt < best[1]:
            best = (name, worst / noise_alt, meaning)
    if best and best[1] <= 4:
        verdict = ("IPEX is within 4x the legitimate error of the case as specified: a tolerance question"
                   if best[0] == "as specified" else
                   f"IPEX computes '{best[0]}' (within 4x the legitimate error) and pao agrees with "
                   f"float64 -- {best[2]}")
    elif bool(nan_rows.any()) and pao_vs_ref <= 1e-9 * scale_ref and float(
            (a - base).abs()[~nan_rows].max()) <= 4 * noise:
        verdict = ("IPEX is right in every row but the NaN ones, where float64 and pao give finite "
                   "values: an IPEX defect in those rows")
    elif pao_vs_ref <= 1e-9 * scale_ref:
        verdict = "IPEX matches none of these semantics; pao agrees with float64: IPEX is wrong"
    else:
        verdict = "pao disagrees with the float64 reference: look at pao"
    lines.append(f"  => {verdict}")
    return lines


def golden_metadata(goldens, glob):
    """(case id, string metadata) of every golden of the manifest, headers only."""
    from safetensors import safe_open
    goldens = pathlib.Path(goldens)
    for entry in json.loads((goldens / "manifest.json").read_text())["cases"]:
        if glob and not fnmatch.fnmatchcase(entry["id"], glob):
            continue
        with safe_open(str(goldens / entry["file"]), framework="pt") as f:
            yield entry["id"], f.metadata()


def check_reference(goldens, glob):
    """reference64 against pao's out_exact on every case: lines, and whether they all agree. A check
    of the float64 reference itself (its gather of the golden's layout, its masks, its new-token
    source) before it is used to judge IPEX or pao."""
    worst, bad, n, layouts = (0.0, ""), [], 0, set()
    for case, tensors in for_each_case(goldens, glob):
        if case.kernel == "reshape_and_cache":
            continue
        ref = reference64(case, tensors)
        scale = float(ref.abs().max()) or 1.0
        rel = float((tensors["out_exact"].to(torch.float64) - ref).abs().max()) / scale
        n += 1
        layouts.add(case.meta["kv_layout"])
        if rel > worst[0]:
            worst = (rel, case.id)
        if not rel <= 1e-9:
            bad.append(f"  DISAGREES: {case.id}: max|out_exact - ref| / max|ref| = {rel:.3e}")
    if not n:
        return [], True
    lines = [f"reference64 (float64, plain torch, its own gather of kv_layout {', '.join(sorted(layouts))}) "
             f"vs pao's out_exact on all {n} cases: worst max|out_exact - ref| / max|ref| = {worst[0]:.3e}"
             + (f" ({worst[1]})" if worst[1] else "")
             + ("; every case agrees (<= 1e-9)" if not bad else f"; {len(bad)} case(s) disagree")] + bad
    return lines, not bad


def check_reshape_reference(goldens, glob):
    """torch_write (vLLM's write in plain torch) against pao's key_cache / value_cache on every
    reshape_and_cache case, bit for bit: lines, and whether they all agree."""
    n, bad = 0, []
    for case, tensors in for_each_case(goldens, glob):
        if case.kernel != "reshape_and_cache":
            continue
        n += 1
        for which in ("key", "value"):
            mine = bits(torch_write(case, tensors, which))
            pao = bits(to_ipex_cache(tensors[which + "_cache"], case.meta["kv_layout"], which))
            differ = int((mine != pao).sum())
            if differ:
                bad.append(f"  DISAGREES: {case.id}: {which}_cache: {differ} of {mine.numel()} elements")
    if not n:
        return [], True
    return ([f"torch_write (vLLM's reshape_and_cache in plain torch: torch's own fp8 conversion, -1 rows "
             f"skipped) vs pao's key_cache / value_cache on all {n} reshape_and_cache cases: "
             + ("bit-identical on every one" if not bad else f"{len(bad)} disagree")] + bad, not bad)


def cache_line(c, tensors_of):
    """The line of a reshape_and_cache case: mismatched elements of each pool."""
    parts = [f"{t['name']} {t['mismatched']}/{t['compared']}" for t in tensors_of.get(c["case_id"], [])]
    return ", ".join(parts) + " elements differ (bitwise)"


def main(argv=None):
    parser = harness_arguments(__doc__, "ipex", "ipex")
    parser.add_argument("--cache-writes", choices=("golden", "ipex"), default="golden",
                        help="prefix attention reads the golden's cache (default) or the one IPEX's "
                             "reshape_and_cache wrote the new tokens into (the write itself is judged by "
                             "the suite's reshape_and_cache cases)")
    parser.add_argument("--evidence", action="store_true",
                        help="float64 attention and the cache write in plain torch from the golden's inputs: "
                             "checked against pao on every case, then against IPEX, with alternatives, "
                             "on each FAIL")
    args = parser.parse_args(argv)
    # A missing dependency is bad input (exit 2), not a mismatch (1): said before any golden is written.
    needs = ("this harness needs torch, safetensors and intel-extension-for-pytorch (docs/vendor-guide.md: "
             "a venv outside the repository)")
    if torch is None:
        print(f"vendor_harness_ipex: error: {TORCH_MISSING}: {needs}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("intel_extension_for_pytorch") is None:
        print(f"vendor_harness_ipex: error: intel_extension_for_pytorch is not installed: {needs}", file=sys.stderr)
        return 2

    pao = find_pao(args.pao)
    goldens, outputs = pathlib.Path(args.goldens), pathlib.Path(args.outputs)
    if not args.no_generate and (rc := run_pao_golden(pao, args.suite, goldens)) != 0:
        return rc
    try:
        mod = ipex()
    except Exception as e:   # installed but not importable (a torch it was not built for, say)
        print(f"vendor_harness_ipex: error: intel_extension_for_pytorch does not import: "
              f"{type(e).__name__}: {first_lines(e)}", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}, intel_extension_for_pytorch {mod.__version__}, "
          f"{torch.get_num_threads()} threads", flush=True)
    outputs.mkdir(parents=True, exist_ok=True)
    notes, findings = {}, {}

    def run(case, tensors):  # the outputs; the case's note and findings kept aside
        result, note, findings[case.id] = run_ipex(case, tensors, args.cache_writes)
        if note:
            notes[case.id] = note
        return result

    errors = run_each_case(goldens, outputs, args.cases, run, NotInIpexApi, "IPEX's API", "IPEX")
    status, rep = diff_report(pao, goldens, outputs, args.cases)
    if rep is None:
        return status
    cache_tensors = {}
    for t in rep["tensors"]:
        if t["name"] in ("key_cache", "value_cache"):
            cache_tensors.setdefault(t["case_id"], []).append(t)

    def lines_of(c, out, width):
        cid = c["case_id"]
        if cid in cache_tensors:    # reshape_and_cache: pao diff's pattern and first location per pool
            lines = [f"{c['status']:7} {cid:{width}} {cache_line(c, cache_tensors)}"]
            lines += [f"{'':8}{t['name']}: {t['pattern']} -- {t['pattern_detail']}"
                      for t in cache_tensors[cid] if t["status"] == "FAIL"]
        else:
            lines = [out_verdict_line(c, out, width)]
        return lines + ([f"{'':8}{notes[cid]}"] if cid in notes else [])

    out_tensor, failing = print_verdicts(
        rep, errors, goldens, outputs, "ipex", " (reshape_and_cache: elements that differ bit for bit)", lines_of,
        f" (IPEX raised, or not in its API; pao diff's tensors: {rep['passed']} passed, {rep['failed']} failed -- a "
        "reshape_and_cache case has two, a case without outputs counts one)")
    # The goldens' vllm_compatible / vllm_incompatible (pao diff prints them as notes "not what vLLM
    # computes: ...", on the cases that ran), counted by reason.
    reasons, noted = {}, {c["case_id"] for c in rep["cases"]
                          if any(n.startswith("not what vLLM computes") for n in c.get("notes", []))}
    for cid, meta in golden_metadata(goldens, args.cases):
        if meta.get("vllm_compatible") == "false":
            for reason in meta.get("vllm_incompatible", "").split("; "):
                reasons.setdefault(re.sub(r"\s*\([^()]*\)$", "", reason), set()).add(cid)
    if reasons:
        flagged = set().union(*reasons.values())
        print(f"{len(flagged)} of {len(rep['cases'])} goldens are not what vLLM's own kernels compute "
              f"(vllm_compatible false; pao diff notes it on the {len(flagged & noted)} that ran), by reason:")
        for key, ids in reasons.items():
            print(f"  {len(ids):3} {key}")
    if args.evidence:
        print("\n== evidence: float64 attention and the cache write in plain torch ==")
        lines, agree = check_reference(goldens, args.cases)
        more, agree_rc = check_reshape_reference(goldens, args.cases)
        print("\n".join(lines + more))
        if not (agree and agree_rc) and status == 0:
            status = 1
        from vendor_harness import load_case
        from safetensors.torch import load_file
        for cid in failing:
            if findings.get(cid):       # reshape_and_cache: the harness's findings of the run
                print(f"\n{cid}")
                for line in findings[cid]:
                    print("  " + line)
                continue
            case, tensors = load_case(goldens / f"{cid}.safetensors", cid)
            actual = load_file(str(outputs / f"{cid}.safetensors"))["out"]
            print(f"\n{cid}")
            for line in evidence(case, tensors, actual):
                print("  " + line)
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Drop-in CPU versions of vLLM's attention ops (``vllm._custom_ops``, and ``context_attention_fwd`` of
``vllm/attention/ops/prefix_prefill.py``), computed by pao's oracle.

Same names, positional order and defaults as vLLM, writing their outputs in place as vLLM's ops do;
keyword-only extras choose the precision (``"kernel"``: vLLM's CUDA kernel's rounding, the default;
``"exact"``: fp64 with one final rounding, the truth) and pao's other conventions. Tensors are CPU
torch tensors or numpy arrays, contiguous or strided, not copied (but for small integer index tensors
of another dtype, and ``o`` under ``skip_decode``); fp8 caches are uint8 (as vLLM
stores them) or torch's float8 dtypes, read as ``kv_cache_dtype`` says. Errors raise
:class:`pao.Error` naming the tensor, the index and the rule.
"""
from __future__ import annotations

import math
import re
from typing import Any

from . import _pao
from ._tensors import buffer, dtype_of, is_torch

# vLLM's tuning as the library writes it (pao/plan/kernel_tuning.hpp): the keyword defaults below.
_TUNING = _pao.default_tuning

Tensor = Any  # a torch CPU tensor or a numpy array


def _scale_value(x: Any, name: str) -> float:
    """k_scale / v_scale: a float or a one-element tensor (newer vLLM passes tensors)."""
    if isinstance(x, (int, float)):
        return float(x)
    n = x.numel() if is_torch(x) else getattr(x, "size", None)
    if n != 1:
        raise _pao.Error(f"{name}: {n} elements; vLLM's ops take one scale per cache (a float or a "
                         f"one-element tensor)")
    return float(x.reshape(-1)[0])


def _cache_dtype(kv_cache_dtype: str, cache: Tensor, name: str) -> str:
    """The pao dtype a cache's memory holds, by vLLM's kv_cache_dtype (u4: u8 codes 0..15, one per byte)."""
    want = _pao.parse_kv_cache_dtype("u8" if kv_cache_dtype == "u4" else kv_cache_dtype)  # auto, fp8, ...
    if want == "auto":
        return dtype_of(cache)
    have = dtype_of(cache)
    if have not in ("u8", want):
        raise _pao.Error(f"{name}: dtype {cache.dtype} cannot hold kv_cache_dtype {kv_cache_dtype} "
                         f"(uint8 codes, or {want})")
    return want


_INTEGER_CACHES = ("u8", "i8", "u4")
_QUANT_WORDS = dict(_pao.default_kv_quant)  # the library's defaults: OpenVINO's layout
_QUANT_TENSORS = ("key_cache_scale", "key_cache_zero_point", "value_cache_scale", "value_cache_zero_point")


def _kv_quant(kv_cache_dtype: str, kv_quant: dict | None, writable: bool = False) -> Any:
    """An integer cache's quantisation for the library (None for other caches). ``kv_quant``: the case
    JSON's kv_quant words ("key", "value": by_token / by_channel / group_<G>; "rounding"; "rule"; pao's
    defaults where left out) and the four tensors key_cache_scale, key_cache_zero_point,
    value_cache_scale, value_cache_zero_point (docs/golden.md, "Integer KV caches")."""
    integer = kv_cache_dtype in _INTEGER_CACHES
    if kv_quant is None:
        if integer:
            raise _pao.Error(f"kv_cache_dtype {kv_cache_dtype}: an integer cache needs kv_quant (its words and the "
                             f"tensors {', '.join(_QUANT_TENSORS)})")
        return None
    if not integer:
        raise _pao.Error(f"kv_quant applies to integer caches only (kv_cache_dtype is {kv_cache_dtype!r}; "
                         f"u8, i8 or u4 take it)")
    unknown = sorted(set(kv_quant) - set(_QUANT_WORDS) - set(_QUANT_TENSORS))
    if unknown:
        raise _pao.Error(f"kv_quant: unknown key {unknown[0]!r} (keys: {', '.join(list(_QUANT_WORDS) + list(_QUANT_TENSORS))})")
    missing = [n for n in _QUANT_TENSORS if kv_quant.get(n) is None]
    if missing:
        raise _pao.Error(f"kv_quant: {missing[0]} is missing (an integer cache's scales and zero points are tensors)")
    words = {k: str(kv_quant.get(k, d)) for k, d in _QUANT_WORDS.items()}
    tensors = [buffer(kv_quant[n], n, writable=writable) for n in _QUANT_TENSORS]
    return _pao.KVQuant(words["key"], words["value"], words["rounding"], words["rule"],
                        4 if kv_cache_dtype == "u4" else 8, *tensors)


def _check_vllm_sizes(num_kv_heads: int, block_size: int, kv_layout: str, value_cache: Tensor) -> None:
    _, heads, block = _pao.value_cache_dims(kv_layout, list(value_cache.shape))
    if num_kv_heads != heads:
        raise _pao.Error(f"num_kv_heads: {num_kv_heads}, but value_cache {list(value_cache.shape)} holds "
                         f"{heads} KV heads (kv_layout {kv_layout})")
    if block_size != block:
        raise _pao.Error(f"block_size: {block_size}, but value_cache {list(value_cache.shape)} has blocks of "
                         f"{block} tokens (kv_layout {kv_layout})")


def _check_blocksparse(local_blocks: int, vert_stride: int, block_size: int, head_sliding_step: int) -> None:
    if (local_blocks, vert_stride, block_size, head_sliding_step) != (0, 0, 64, 0):
        raise _pao.Error("blocksparse attention is not supported by pao: blocksparse_local_blocks, "
                         "blocksparse_vert_stride, blocksparse_block_size and blocksparse_head_sliding_step "
                         "must keep their defaults (0, 0, 64, 0)")


def _as_int32(t: Tensor) -> Tensor:
    """An integer index tensor as int32 (itself when it already is)."""
    if is_torch(t):
        import torch
        return t if t.dtype == torch.int32 else t.to(torch.int32)
    return t if t.dtype == "int32" else t.astype("int32")


def _optional(t: Tensor | None, name: str) -> Any:
    return None if t is None else buffer(t, name)


def _decode(kernel: str, out: Tensor, partials: tuple[Tensor, Tensor, Tensor] | None, query: Tensor,
            key_cache: Tensor, value_cache: Tensor, num_kv_heads: int, scale: float, block_tables: Tensor,
            seq_lens: Tensor, block_size: int, max_seq_len: int, alibi_slopes: Tensor | None,
            kv_cache_dtype: str, k_scale: Any, v_scale: Any, tp_rank: int, blocksparse: tuple[int, int, int, int],
            precision: str, warp_size: int, threads_per_cta: int, partition_size: int, kv_layout: str,
            sliding_window: int, soft_cap: float, kv_quant: dict | None) -> None:
    _check_blocksparse(*blocksparse)
    _check_vllm_sizes(num_kv_heads, block_size, kv_layout, value_cache)
    if not isinstance(partition_size, int) or partition_size <= 0:
        raise _pao.Error(f"partition_size: {partition_size!r}, expected a positive multiple of the block size")
    sliding_window = 0 if sliding_window is None else sliding_window
    if tuple(out.shape) != tuple(query.shape):
        raise _pao.Error(f"out: shape {list(out.shape)}, expected query's {list(query.shape)}")
    exp_sums = max_logits = tmp_out = None
    if partials is not None:
        exp_sum, logits, tmp = partials
        want = _pao.max_num_partitions(max_seq_len, partition_size)
        num_seqs, num_heads, head_size = query.shape
        if len(tmp.shape) != 4 or tuple(tmp.shape) != (num_seqs, num_heads, tmp.shape[2], head_size):
            raise _pao.Error(f"tmp_out: shape {list(tmp.shape)}, expected [num_seqs {num_seqs}, num_heads "
                             f"{num_heads}, max_num_partitions, head_size {head_size}]")
        for name, t in (("exp_sum", exp_sum), ("max_logits", logits)):
            if tuple(t.shape) != tuple(tmp.shape[:3]):
                raise _pao.Error(f"{name}: shape {list(t.shape)}, expected tmp_out's first three dimensions "
                                 f"{list(tmp.shape[:3])}")
        if tmp.shape[2] != want:
            raise _pao.Error(f"tmp_out: shape {list(tmp.shape)} holds {tmp.shape[2]} partitions, but max_seq_len "
                             f"{max_seq_len} / partition_size {partition_size} gives {want} (vLLM's kernel "
                             f"indexes tmp_out, exp_sum and max_logits with that count)")
        exp_sums = buffer(exp_sum, "exp_sum", writable=True)
        max_logits = buffer(logits, "max_logits", writable=True)
        tmp_out = buffer(tmp, "tmp_out", writable=True)
    _pao.decode(kernel, buffer(out, "out", writable=True), exp_sums, max_logits, tmp_out, buffer(query, "query"),
                buffer(key_cache, "key_cache", _cache_dtype(kv_cache_dtype, key_cache, "key_cache")),
                buffer(value_cache, "value_cache", _cache_dtype(kv_cache_dtype, value_cache, "value_cache")),
                kv_layout, buffer(block_tables, "block_tables"), buffer(seq_lens, "seq_lens"), max_seq_len,
                partition_size, _optional(alibi_slopes, "alibi_slopes"), float(scale),
                _scale_value(k_scale, "k_scale"), _scale_value(v_scale, "v_scale"), sliding_window, soft_cap,
                precision, warp_size, threads_per_cta, _kv_quant(kv_cache_dtype, kv_quant))


def paged_attention_v1(out: Tensor, query: Tensor, key_cache: Tensor, value_cache: Tensor, num_kv_heads: int,
                       scale: float, block_tables: Tensor, seq_lens: Tensor, block_size: int, max_seq_len: int,
                       alibi_slopes: Tensor | None, kv_cache_dtype: str, k_scale: Any, v_scale: Any,
                       tp_rank: int = 0, blocksparse_local_blocks: int = 0, blocksparse_vert_stride: int = 0,
                       blocksparse_block_size: int = 64, blocksparse_head_sliding_step: int = 0, *,
                       precision: str = "kernel", warp_size: int = _TUNING["warp_size"],
                       threads_per_cta: int = _TUNING["threads_per_cta"], kv_layout: str = "vllm",
                       sliding_window: int = 0, soft_cap: float = 0.0, kv_quant: dict | None = None) -> None:
    """vLLM's paged attention V1 into ``out``.

    out [num_seqs, num_heads, head_size] (query's dtype, written); query [num_seqs, num_heads, head_size]
    f32/f16/bf16; key_cache [num_blocks, num_kv_heads, head_size/x, block_size, x] (x = 16 bytes / element);
    value_cache [num_blocks, num_kv_heads, head_size, block_size]; block_tables [num_seqs,
    max_blocks_per_seq] int32; seq_lens [num_seqs] int32; alibi_slopes [num_heads] f32 or None.
    Keyword-only: ``precision`` "kernel" or "exact"; ``warp_size`` / ``threads_per_cta`` of the kernel
    emulated; ``kv_layout`` "vllm" (default), "nhd" or "hnd" caches; ``sliding_window`` / ``soft_cap``
    (pao extensions vLLM's V1 does not have; 0 = off); ``kv_quant`` for an integer cache
    (``kv_cache_dtype`` "u8", "i8" or "u4", a pao extension): a dict of kv_quant's words ("key", "value",
    "rounding", "rule") and the tensors key_cache_scale, key_cache_zero_point, value_cache_scale,
    value_cache_zero_point, as a golden holds them (docs/golden.md, "Integer KV caches").
    """
    _decode("v1", out, None, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens,
            block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank,
            (blocksparse_local_blocks, blocksparse_vert_stride, blocksparse_block_size,
             blocksparse_head_sliding_step), precision, warp_size, threads_per_cta, _TUNING["partition_size"],
            kv_layout, sliding_window, soft_cap, kv_quant)


def paged_attention_v2(out: Tensor, exp_sum: Tensor, max_logits: Tensor, tmp_out: Tensor, query: Tensor,
                       key_cache: Tensor, value_cache: Tensor, num_kv_heads: int, scale: float,
                       block_tables: Tensor, seq_lens: Tensor, block_size: int, max_seq_len: int,
                       alibi_slopes: Tensor | None, kv_cache_dtype: str, k_scale: Any, v_scale: Any,
                       tp_rank: int = 0, blocksparse_local_blocks: int = 0, blocksparse_vert_stride: int = 0,
                       blocksparse_block_size: int = 64, blocksparse_head_sliding_step: int = 0, *,
                       precision: str = "kernel", warp_size: int = _TUNING["warp_size"],
                       threads_per_cta: int = _TUNING["threads_per_cta"],
                       partition_size: int = _TUNING["partition_size"], kv_layout: str = "vllm", sliding_window: int = 0,
                       soft_cap: float = 0.0, kv_quant: dict | None = None) -> None:
    """vLLM's partitioned paged attention V2 (partials, then the reduce) into ``out`` and its partials.

    exp_sum, max_logits [num_seqs, num_heads, max_num_partitions] f32 and tmp_out [num_seqs, num_heads,
    max_num_partitions, head_size] (query's dtype) are written too, with max_num_partitions =
    ceil(max_seq_len / partition_size) as vLLM's kernel indexes them (partitions past a sequence's end:
    tmp_out 0, max_logits -inf, exp_sum 0, where vLLM leaves them unwritten). ``partition_size``:
    vLLM's 512 unless given. Other arguments as :func:`paged_attention_v1`.
    """
    _decode("v2", out, (exp_sum, max_logits, tmp_out), query, key_cache, value_cache, num_kv_heads, scale,
            block_tables, seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale,
            tp_rank, (blocksparse_local_blocks, blocksparse_vert_stride, blocksparse_block_size,
                      blocksparse_head_sliding_step), precision, warp_size, threads_per_cta, partition_size,
            kv_layout, sliding_window, soft_cap, kv_quant)


def reshape_and_cache(key: Tensor, value: Tensor, key_cache: Tensor, value_cache: Tensor, slot_mapping: Tensor,
                      kv_cache_dtype: str, k_scale: Any, v_scale: Any, *, kv_layout: str = "vllm",
                      kv_quant: dict | None = None) -> None:
    """vLLM's reshape_and_cache: token i of key / value [num_tokens, num_kv_heads, head_size] into slot
    slot_mapping[i] (int64; -1 skips the token) of both caches, in place; fp8 caches store
    fp8(x / scale). ``kv_layout`` "nhd" is vLLM's reshape_and_cache_flash layout, "hnd" IPEX's. An
    integer cache (``kv_quant`` as in :func:`paged_attention_v1`) gets its codes and its scale /
    zero-point tensors written in place; a by_channel block is requantised over its earlier tokens."""
    _pao.write_cache(buffer(key, "key"), buffer(value, "value"),
                     buffer(key_cache, "key_cache", _cache_dtype(kv_cache_dtype, key_cache, "key_cache"), True),
                     buffer(value_cache, "value_cache", _cache_dtype(kv_cache_dtype, value_cache, "value_cache"),
                            True),
                     buffer(slot_mapping, "slot_mapping"), kv_layout, _scale_value(k_scale, "k_scale"),
                     _scale_value(v_scale, "v_scale"), _kv_quant(kv_cache_dtype, kv_quant, writable=True))


def _no_grad() -> Any:
    """torch.no_grad() when torch is loaded (o may require grad), else a no-op context."""
    import contextlib
    import sys
    return sys.modules["torch"].no_grad() if "torch" in sys.modules else contextlib.nullcontext()


# pao's names of the prefix kernel's tensors -> context_attention_fwd's.
_VLLM_PREFIX_NAMES = {"query_start_loc": "b_start_loc", "block_tables": "b_loc", "seq_lens": "b_seq_len",
                      "key_cache": "k_cache", "value_cache": "v_cache", "query": "q", "max_query_len": "max_input_len"}
_PREFIX_NAMES = re.compile(r"\b(" + "|".join(_VLLM_PREFIX_NAMES) + r")\b")


def context_attention_fwd(q: Tensor, k: Tensor, v: Tensor, o: Tensor, kv_cache_dtype: str, k_cache: Tensor,
                          v_cache: Tensor, b_loc: Tensor, b_start_loc: Tensor, b_seq_len: Tensor,
                          max_seq_len: int | None, max_input_len: int, k_scale: Any, v_scale: Any,
                          alibi_slopes: Tensor | None = None, sliding_window: int | None = None,
                          sm_scale: float | None = None, skip_decode: bool = False, fp8_out_scale: Any = None,
                          sinks: Tensor | None = None, is_block_table_ptr: bool = False, *,
                          precision: str = "kernel", kv_layout: str = "vllm", new_kv_source: str = "input",
                          soft_cap: float = 0.0, block_m: int = _TUNING["block_m"],
                          block_n: int = _TUNING["block_n"], context_tile: int = _TUNING["context_tile"],
                          kv_quant: dict | None = None) -> None:
    """vLLM's prefix (chunked-prefill) attention, ``context_attention_fwd`` of prefix_prefill.py, into ``o``.

    q [num_tokens, num_heads, head_size]; k, v [num_tokens, num_kv_heads, head_size] (the new tokens);
    o like q (written); k_cache / v_cache as in paged_attention_v1; b_loc [num_seqs, max_blocks] int32
    (the block table); b_start_loc [num_seqs + 1] int32 (query_start_loc); b_seq_len [num_seqs] int32
    (context + new tokens). ``sliding_window`` None or <= 0: off, else a query sees its last W positions.
    As in vLLM, ALiBi runs a kernel without a window: with ``alibi_slopes`` the window is not applied.
    ``skip_decode`` leaves the rows of sequences with one new token unwritten, as vLLM does.
    ``fp8_out_scale``, ``sinks`` and ``is_block_table_ptr`` are not supported (pao.Error).
    Keyword-only: ``precision``; ``kv_layout``; ``new_kv_source`` "input" (vLLM's: the new tokens from
    k / v) or "cache" (read back from the quantised cache, as FlashAttention/FlashInfer/IPEX backends
    do); ``soft_cap``; the kernel's tiles ``block_m`` / ``block_n`` / ``context_tile``; ``kv_quant`` for
    an integer cache, as in :func:`paged_attention_v1`.
    """
    if fp8_out_scale is not None or sinks is not None or is_block_table_ptr:
        raise _pao.Error("context_attention_fwd: fp8_out_scale, sinks and is_block_table_ptr are not supported "
                         "by pao (leave them None / False)")
    window = 0 if sliding_window is None or sliding_window <= 0 or alibi_slopes is not None else int(sliding_window)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    # vLLM takes any integer index tensors (it casts b_loc to int32): so does pao (small copies).
    b_loc, b_start_loc, b_seq_len = (_as_int32(t) for t in (b_loc, b_start_loc, b_seq_len))
    buffer(o, "o", writable=True)  # before any work: o must be writable in place
    target = o
    if skip_decode:  # compute every row, then write back only those of sequences with more than one new token
        target = o.detach().clone() if is_torch(o) else o.copy()
    try:
        _pao.prefix(buffer(target, "o", writable=True), buffer(q, "q"), buffer(k, "k"), buffer(v, "v"),
                    buffer(k_cache, "k_cache", _cache_dtype(kv_cache_dtype, k_cache, "k_cache")),
                    buffer(v_cache, "v_cache", _cache_dtype(kv_cache_dtype, v_cache, "v_cache")), kv_layout,
                    buffer(b_loc, "b_loc"), buffer(b_seq_len, "b_seq_len"), buffer(b_start_loc, "b_start_loc"),
                    int(max_input_len), _optional(alibi_slopes, "alibi_slopes"), float(scale),
                    _scale_value(k_scale, "k_scale"), _scale_value(v_scale, "v_scale"), window, soft_cap,
                    new_kv_source, block_m, block_n, context_tile, precision, _kv_quant(kv_cache_dtype, kv_quant))
    except _pao.Error as e:  # the kernel names its tensors as pao does; say vLLM's names too
        raise _pao.Error(_PREFIX_NAMES.sub(lambda m: f"{m[0]} ({_VLLM_PREFIX_NAMES[m[0]]})", str(e))) from None
    if skip_decode:
        starts = [int(x) for x in b_start_loc.tolist()]
        with _no_grad():
            for s in range(len(starts) - 1):
                if starts[s + 1] - starts[s] > 1:
                    o[starts[s]:starts[s + 1]] = target[starts[s]:starts[s + 1]]

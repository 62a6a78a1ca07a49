"""vLLM's attention kernel tests, written the way vLLM's tests/kernels/attention tests are, with
pao.ops where vLLM calls its CUDA ops (pao's kernel precision: vLLM's kernel's rounding), checked
against pao's exact precision and against an fp64 reference in plain torch written here.

This is what a vendor does with pao in place of the kernel under test: the same parametrised
test, run on the CPU.
"""
import math
import random

import pytest

torch = pytest.importorskip("torch")
import pao  # noqa: E402
from pao import ops  # noqa: E402

NUM_SEQS = [1, 7]
NUM_HEADS = [(8, 8), (8, 2), (8, 1)]  # MHA, GQA, MQA
HEAD_SIZES = [64, 80, 96, 112, 120, 128, 192, 256]
BLOCK_SIZES = [8, 16, 32]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
KV_CACHE_DTYPES = ["auto", "fp8", "fp8_e5m2"]
USE_ALIBI = [False, True]
SPARE_BLOCKS = 8  # blocks no sequence uses
PARTITION_SIZE = 512
SEED = 0
FULL_PRODUCT = ((128, 16), (64, 32))  # (head_size, block_size) pairs that run every combination


def fp8_dtype(kv_cache_dtype):
    return torch.float8_e5m2 if kv_cache_dtype == "fp8_e5m2" else torch.float8_e4m3fn


def make_caches(num_blocks, block_size, num_kv_heads, head_size, dtype, kv_cache_dtype, scale):
    """vLLM-layout caches: key [blocks, kv_heads, head_size/x, block_size, x], value [blocks,
    kv_heads, head_size, block_size]; fp8 caches as uint8 codes of value / scale, as vLLM stores
    them. Returns the caches and their dequantised float64 values (the reference's view)."""
    elem = 1 if kv_cache_dtype != "auto" else torch.tensor([], dtype=dtype).element_size()
    x = 16 // elem
    key = torch.empty(num_blocks, num_kv_heads, head_size // x, block_size, x).uniform_(-scale, scale)
    value = torch.empty(num_blocks, num_kv_heads, head_size, block_size).uniform_(-scale, scale)
    if kv_cache_dtype == "auto":
        key, value = key.to(dtype), value.to(dtype)
        return key, value, key.double(), value.double()
    f8 = fp8_dtype(kv_cache_dtype)
    k8, v8 = key.to(f8), value.to(f8)
    return k8.view(torch.uint8), v8.view(torch.uint8), k8.double(), v8.double()


def ref_decode(query, key64, value64, block_tables, seq_lens, scale, alibi_slopes, k_scale, v_scale):
    """fp64 attention of each query over its sequence's cached tokens, gathered through the block
    table (written for this test, after vLLM's ref_single_query_cached_kv_attention)."""
    num_seqs, num_heads, head_size = query.shape
    num_kv_heads, block_size = value64.shape[1], value64.shape[3]
    out = torch.zeros(num_seqs, num_heads, head_size, dtype=torch.float64)
    for s in range(num_seqs):
        n = int(seq_lens[s])
        if n == 0:
            continue
        blocks = block_tables[s, (torch.arange(n) // block_size)].long()
        offsets = torch.arange(n) % block_size
        k = key64[blocks, :, :, offsets, :].reshape(n, num_kv_heads, head_size) * k_scale  # [n, kvh, d]
        v = value64[blocks, :, :, offsets] * v_scale  # [n, kvh, d]
        group = num_heads // num_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        logits = torch.einsum("hd,nhd->hn", query[s].double(), k) * scale
        if alibi_slopes is not None:
            logits += alibi_slopes.double()[:, None] * (torch.arange(n).double() - n + 1)[None, :]
        p = torch.softmax(logits, dim=-1)
        out[s] = torch.einsum("hn,nhd->hd", p, v)
    return out


ULP = {torch.float32: 2**-24, torch.float16: 2**-11, torch.bfloat16: 2**-8}  # unit roundoff


def tolerance(kv_cache_dtype):
    """vLLM's test tolerances: atol 1e-3, rtol 1e-5; fp8 caches 1e-2 (on outputs of the size its
    inputs give: query and caches uniform in +-1/sqrt(head_size))."""
    return (1e-2, 1e-5) if kv_cache_dtype != "auto" else (1e-3, 1e-5)


def paged_attention_params():
    """Only the cases that run (CI time): the full product of vLLM's grid for the FULL_PRODUCT
    (head_size, block_size) pairs; every other pair with 7 sequences, GQA, no ALiBi and no fp8, in
    every dtype and both versions."""
    params = []
    for head_size in HEAD_SIZES:
        for block_size in BLOCK_SIZES:
            full = (head_size, block_size) in FULL_PRODUCT
            for version in ["v1", "v2"]:
                for num_seqs in NUM_SEQS if full else [7]:
                    for num_heads in NUM_HEADS if full else [(8, 2)]:
                        for use_alibi in USE_ALIBI if full else [False]:
                            for dtype in DTYPES:
                                for kv_cache_dtype in KV_CACHE_DTYPES if full else ["auto"]:
                                    params.append((version, num_seqs, num_heads, head_size, use_alibi, block_size,
                                                   dtype, kv_cache_dtype))
    return params


@pytest.mark.parametrize("version,num_seqs,num_heads,head_size,use_alibi,block_size,dtype,kv_cache_dtype",
                         paged_attention_params())
def test_paged_attention(version, num_seqs, num_heads, head_size, use_alibi, block_size, dtype, kv_cache_dtype):
    random.seed(SEED)
    torch.manual_seed(SEED)
    num_query_heads, num_kv_heads = num_heads
    scale = float(1.0 / (head_size**0.5))
    query = torch.empty(num_seqs, num_query_heads, head_size, dtype=dtype).uniform_(-scale, scale)
    alibi_slopes = torch.randn(num_query_heads, dtype=torch.float) if use_alibi else None
    # Lengths up to 2 partitions; one sequence ends mid-block in its second partition, one has a
    # single token (V2: partitions past its end).
    seq_lens = [random.randint(1, PARTITION_SIZE) for _ in range(num_seqs)]
    seq_lens[0] = 1 if num_seqs > 1 else seq_lens[0]
    seq_lens[-1] = 2 * PARTITION_SIZE - block_size // 2 if num_seqs > 1 else seq_lens[-1]
    max_seq_len = max(seq_lens)
    seq_lens = torch.tensor(seq_lens, dtype=torch.int)
    max_blocks = (max_seq_len + block_size - 1) // block_size
    num_blocks = num_seqs * max_blocks + SPARE_BLOCKS
    block_tables = torch.tensor([random.sample(range(num_blocks), max_blocks) for _ in range(num_seqs)],
                                dtype=torch.int)  # non-contiguous physical blocks
    key_cache, value_cache, key64, value64 = make_caches(num_blocks, block_size, num_kv_heads, head_size, dtype,
                                                         kv_cache_dtype, scale)
    k_scale = v_scale = torch.tensor(1.0 if kv_cache_dtype == "auto" else 0.5, dtype=torch.float32)

    def run(precision):
        out = torch.empty_like(query)
        if version == "v1":
            ops.paged_attention_v1(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens,
                                   block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale,
                                   precision=precision)
            return out, None
        num_partitions = (max_seq_len + PARTITION_SIZE - 1) // PARTITION_SIZE
        tmp_out = torch.empty(num_seqs, num_query_heads, num_partitions, head_size, dtype=dtype)
        exp_sums = torch.empty(num_seqs, num_query_heads, num_partitions, dtype=torch.float32)
        max_logits = torch.empty_like(exp_sums)
        ops.paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads,
                               scale, block_tables, seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype,
                               k_scale, v_scale, precision=precision)
        return out, (exp_sums, max_logits, tmp_out)

    output, partials = run("kernel")  # where vLLM's test calls its CUDA kernel
    exact, _ = run("exact")  # pao's reference: fp64, rounded once
    ref = ref_decode(query, key64, value64, block_tables, seq_lens, scale, alibi_slopes, float(k_scale),
                     float(v_scale))
    atol, rtol = tolerance(kv_cache_dtype)
    torch.testing.assert_close(output.double(), exact.double(), atol=atol, rtol=rtol)
    # pao's exact precision is the fp64 answer rounded once: within half an ulp of the output dtype.
    assert (exact.double() - ref).abs().max() <= ULP[dtype] * ref.abs().max() + 1e-12
    if partials is not None:
        exp_sums, max_logits, tmp_out = partials
        last = (seq_lens.long() - 1) // PARTITION_SIZE  # partitions at or past a sequence's end are empty
        for s in range(num_seqs):
            assert torch.isfinite(max_logits[s, :, :last[s] + 1]).all()
            assert (exp_sums[s, :, last[s] + 1:] == 0).all()


@pytest.mark.parametrize("num_heads", NUM_HEADS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kv_cache_dtype", KV_CACHE_DTYPES)
def test_reshape_and_cache(num_heads, dtype, kv_cache_dtype):
    """After vLLM's test_cache.py: the written slots hold the tokens (fp8: the codes of x / scale),
    every other slot is untouched."""
    torch.manual_seed(SEED)
    _, num_kv_heads = num_heads
    head_size, block_size, num_blocks, num_tokens = 64, 16, 32, 42
    key = torch.randn(num_tokens, num_kv_heads, head_size, dtype=dtype)
    value = torch.randn(num_tokens, num_kv_heads, head_size, dtype=dtype)
    slots = torch.randperm(num_blocks * block_size)[:num_tokens].long()
    slots[5] = -1  # a padding token
    key_cache, value_cache, _, _ = make_caches(num_blocks, block_size, num_kv_heads, head_size, dtype,
                                               kv_cache_dtype, 1.0)
    before_k, before_v = key_cache.clone(), value_cache.clone()
    k_scale, v_scale = (1.0, 1.0) if kv_cache_dtype == "auto" else (0.5, 0.25)
    ops.reshape_and_cache(key, value, key_cache, value_cache, slots, kv_cache_dtype, torch.tensor(k_scale),
                          v_scale)
    x = key_cache.shape[-1]
    mapped = torch.zeros(num_blocks, block_size, dtype=torch.bool)
    for t in range(num_tokens):
        s = int(slots[t])
        if s < 0:
            continue
        b, o = divmod(s, block_size)
        mapped[b, o] = True
        k_row = key_cache[b, :, :, o, :].reshape(num_kv_heads, head_size)
        v_row = value_cache[b, :, :, o]
        if kv_cache_dtype == "auto":
            assert torch.equal(k_row, key[t]) and torch.equal(v_row, value[t])
        else:
            f8 = fp8_dtype(kv_cache_dtype)
            assert torch.equal(k_row, (key[t].float() / k_scale).to(f8).view(torch.uint8))
            assert torch.equal(v_row, (value[t].float() / v_scale).to(f8).view(torch.uint8))
    untouched = ~mapped
    assert torch.equal(key_cache.permute(0, 3, 1, 2, 4)[untouched], before_k.permute(0, 3, 1, 2, 4)[untouched])
    assert torch.equal(value_cache.permute(0, 3, 1, 2)[untouched], before_v.permute(0, 3, 1, 2)[untouched])
    assert x == 16 // key_cache.element_size()


@pytest.mark.parametrize("num_heads", NUM_HEADS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sliding_window", [None, 24])
@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8"])
def test_context_attention_fwd(num_heads, dtype, sliding_window, kv_cache_dtype):
    """After vLLM's test_prefix_prefill.py: new tokens of each sequence attend to its cached context
    and causally to themselves; the new K/V are written to the cache by reshape_and_cache first."""
    random.seed(SEED)
    torch.manual_seed(SEED)
    num_query_heads, num_kv_heads = num_heads
    head_size, block_size, num_blocks = 128, 16, 128
    query_lens = [5, 1, 40]
    ctx_lens = [30, 17, 0]
    seq_lens = [q + c for q, c in zip(query_lens, ctx_lens)]
    num_tokens = sum(query_lens)
    q = torch.randn(num_tokens, num_query_heads, head_size, dtype=dtype) * 0.5
    k = torch.randn(num_tokens, num_kv_heads, head_size, dtype=dtype) * 0.5
    v = torch.randn(num_tokens, num_kv_heads, head_size, dtype=dtype) * 0.5
    max_blocks = max((s + block_size - 1) // block_size for s in seq_lens)
    b_loc = torch.tensor([random.sample(range(num_blocks), max_blocks) for _ in seq_lens], dtype=torch.int)
    b_start_loc = torch.tensor([0] + list(torch.tensor(query_lens).cumsum(0)), dtype=torch.int)
    b_seq_len = torch.tensor(seq_lens, dtype=torch.int)
    key_cache, value_cache, _, _ = make_caches(num_blocks, block_size, num_kv_heads, head_size, dtype,
                                               kv_cache_dtype, 0.5)
    # The context's K/V: random tokens written through the block table; then the new tokens.
    ctx_k = torch.randn(sum(ctx_lens), num_kv_heads, head_size, dtype=dtype) * 0.5
    ctx_v = torch.randn(sum(ctx_lens), num_kv_heads, head_size, dtype=dtype) * 0.5
    ctx_slots, new_slots = [], []
    for s, (c, n) in enumerate(zip(ctx_lens, query_lens)):
        pos = [int(b_loc[s, p // block_size]) * block_size + p % block_size for p in range(c + n)]
        ctx_slots += pos[:c]
        new_slots += pos[c:]
    ops.reshape_and_cache(ctx_k, ctx_v, key_cache, value_cache, torch.tensor(ctx_slots).long(), kv_cache_dtype,
                          1.0, 1.0)
    ops.reshape_and_cache(k, v, key_cache, value_cache, torch.tensor(new_slots).long(), kv_cache_dtype, 1.0, 1.0)

    def run(precision):
        o = torch.empty_like(q)
        ops.context_attention_fwd(q, k, v, o, kv_cache_dtype, key_cache, value_cache, b_loc, b_start_loc, b_seq_len,
                                  max(seq_lens), max(query_lens), torch.tensor(1.0), torch.tensor(1.0),
                                  sliding_window=sliding_window, precision=precision)
        return o

    output, exact = run("kernel"), run("exact")
    # fp64 reference from the unquantised tokens (vLLM's convention: the new tokens from k / v).
    scale = 1 / math.sqrt(head_size)
    ref = torch.empty(num_tokens, num_query_heads, head_size, dtype=torch.float64)
    for s, (c, n) in enumerate(zip(ctx_lens, query_lens)):
        c0, q0 = sum(ctx_lens[:s]), int(b_start_loc[s])
        if kv_cache_dtype == "auto":
            kk = torch.cat([ctx_k[c0:c0 + c], k[q0:q0 + n]]).double()
            vv = torch.cat([ctx_v[c0:c0 + c], v[q0:q0 + n]]).double()
        else:
            f8 = torch.float8_e4m3fn
            kk = torch.cat([ctx_k[c0:c0 + c].float().to(f8).double(), k[q0:q0 + n].double()])
            vv = torch.cat([ctx_v[c0:c0 + c].float().to(f8).double(), v[q0:q0 + n].double()])
        group = num_query_heads // num_kv_heads
        kk, vv = kk.repeat_interleave(group, 1), vv.repeat_interleave(group, 1)
        logits = torch.einsum("qhd,khd->hqk", q[q0:q0 + n].double(), kk) * scale
        qpos = torch.arange(c, c + n)[:, None]
        kpos = torch.arange(c + n)[None, :]
        visible = kpos <= qpos
        if sliding_window:
            visible &= qpos - kpos < sliding_window
        logits = logits.masked_fill(~visible[None], float("-inf"))
        ref[q0:q0 + n] = torch.einsum("hqk,khd->qhd", torch.softmax(logits, -1), vv)
    atol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}[dtype]
    torch.testing.assert_close(output.double(), ref, atol=atol, rtol=0)
    assert (exact.double() - ref).abs().max() <= ULP[dtype] * ref.abs().max() + 1e-12


def test_errors_name_the_argument():
    query = torch.zeros(2, 4, 64, dtype=torch.float16)
    key_cache = torch.zeros(8, 2, 8, 16, 8, dtype=torch.float16)
    value_cache = torch.zeros(8, 2, 64, 16, dtype=torch.float16)
    block_tables = torch.zeros(2, 1, dtype=torch.int)
    seq_lens = torch.tensor([3, 5], dtype=torch.int)
    out = torch.empty_like(query)
    args = (out, query, key_cache, value_cache, 2, 0.125, block_tables, seq_lens, 16, 5, None, "auto", 1.0, 1.0)
    ops.paged_attention_v1(*args)
    with pytest.raises(pao.Error, match="num_kv_heads: 4, but value_cache"):
        ops.paged_attention_v1(out, query, key_cache, value_cache, 4, *args[5:])
    with pytest.raises(pao.Error, match="blocksparse attention is not supported"):
        ops.paged_attention_v1(*args, 0, 2)
    with pytest.raises(pao.Error, match="kv_cache_dtype = int8"):
        ops.paged_attention_v1(*args[:11], "int8", 1.0, 1.0)
    with pytest.raises(pao.Error, match="k_scale: 2 elements"):
        ops.paged_attention_v1(*args[:12], torch.ones(2), 1.0)
    bad_tables = torch.full((2, 1), 9, dtype=torch.int)  # block 9 of 8
    with pytest.raises(pao.Error, match=r"block_tables\[0\]\[0\] = 9: block id out of range"):
        ops.paged_attention_v1(out, query, key_cache, value_cache, 2, 0.125, bad_tables, *args[7:])
    assert issubclass(pao.Error, ValueError)

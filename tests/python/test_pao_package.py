"""The rest of the pao package: cases and goldens, pao.diff on real planted bugs, the pytest
assertion, the simulator, numpy inputs, strided and zero-copy tensors, errors."""
import json
import os

import numpy as np
import pytest

import pao
from pao import cases, ops

DECODE = {"num_heads": 4, "num_kv_heads": 2, "head_size": 64, "block_size": 16, "dtype": "f16",
          "partition_size": 64, "seq_lens": [150, 1, 230], "seed": 7}
PREFIX = {"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 64, "block_size": 16,
          "dtype": "bf16", "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25,
          "query_lens": [5, 9], "seq_lens": [40, 9], "seed": 4}


def test_cases_load_and_golden_match_pao_golden(tmp_path):
    c = cases.load(DECODE)
    assert c["id"].startswith("decode-h4x2-d64-b16-f16")
    assert "3 seqs" in cases.describe(DECODE)
    g = cases.make_golden(DECODE)
    assert set(g.tensors) >= {"query", "key_cache", "value_cache", "out", "out_exact", "v1.out", "v2.tmp_out"}
    assert g.metadata["case_id"] == c["id"] and g.case["seed"] == 7
    path = cases.write_golden(DECODE, tmp_path)
    read = cases.read_golden(path)
    for name, t in g.tensors.items():
        assert np.array_equal(np.asarray(t).view(np.uint8), np.asarray(read[name]).view(np.uint8)), name
    # A small golden (inputs only) reads back whole: the outputs recomputed bit for bit.
    small = cases.write_golden(DECODE, tmp_path / "small", outputs="none")
    assert "v1.out" not in cases.read_golden(small, complete=False).tensors
    assert np.array_equal(cases.read_golden(small)["v1.out"].view(np.uint16), g["v1.out"].view(np.uint16))
    # The case's outputs in one precision are the golden's.
    kernel = cases.outputs(DECODE, "kernel")
    assert np.array_equal(kernel["v2.out"].view(np.uint16), g["v2.out"].view(np.uint16))


def test_case_fields_are_the_library_schema():
    fields = {f["name"]: f for f in cases.fields()}
    # Every field the canonical JSON of a decode and a prefix case holds is one of them.
    assert set(cases.load(DECODE)) <= set(fields) and set(cases.load(PREFIX)) <= set(fields)
    assert fields["partition_size"]["kinds"] == "decode" and fields["block_size"]["default"] == 16
    # default_tuning (what pao.ops defaults to) is the schema's tuning group.
    tuning = {n: f["default"] for n, f in fields.items() if f["group"] == "tuning" and isinstance(f["default"], int)}
    assert tuning == ops._TUNING and tuning["partition_size"] == 512


def test_ops_on_a_golden_reproduce_its_kernel_outputs():
    """pao.ops on a golden's own tensors (numpy, bf16 via ml_dtypes, fp8 codes) give its outputs."""
    g = cases.make_golden(PREFIX)
    m = g.metadata
    o = np.zeros_like(g["query"])
    ops.context_attention_fwd(g["query"], g["key"], g["value"], o, "fp8_e4m3", g["key_cache"], g["value_cache"],
                              g["block_tables"], g["query_start_loc"], g["seq_lens"], int(m["max_seq_len"]),
                              max(cases.load(PREFIX)["query_lens"]), float(m["k_scale"]), float(m["v_scale"]))
    assert np.array_equal(o.view(np.uint16), g["prefix.out"].view(np.uint16))


INTEGER_DECODE = {"num_heads": 4, "num_kv_heads": 2, "head_size": 64, "block_size": 16, "dtype": "f16",
                  "partition_size": 32, "seq_lens": [40, 1, 77], "kv_cache_dtype": "u8", "kv_layout": "hnd",
                  "kv_quant": {"key": "by_channel", "value": "group_32", "rule": "openvino"}, "seed": 3}
INTEGER_FUSED = {"kernel": "write_and_attend", "num_heads": 4, "num_kv_heads": 2, "head_size": 64,
                 "block_size": 16, "dtype": "bf16", "kv_cache_dtype": "i8", "kv_layout": "nhd",
                 "kv_quant": {"key": "by_channel", "value": "by_token", "rounding": "half_away"},
                 "new_kv_source": "cache", "query_lens": [7, 19], "seq_lens": [40, 19], "seed": 5}


def _quant(g, case, suffix=""):
    """A golden's kv_quant for pao.ops: the case's words and its scale / zero-point tensors."""
    q = dict(cases.load(case)["kv_quant"])
    q.pop("scale_dtype"), q.pop("zero_point_dtype")
    for name in ("key_cache_scale", "key_cache_zero_point", "value_cache_scale", "value_cache_zero_point"):
        q[name] = g[name + suffix]
    return q


def test_ops_on_integer_cache_goldens_reproduce_them():
    """pao.ops with integer caches (kv_quant: words and scale / zero-point tensors): V1, V2 and its
    partials, and the fused write and attention -- reshape_and_cache into copies of the caches before
    (a by-channel block requantised), then context_attention_fwd over them -- bit for bit."""
    g = cases.make_golden(INTEGER_DECODE)
    m, q = g.metadata, _quant(g, INTEGER_DECODE)
    out = np.zeros_like(g["query"])
    args = (g["query"], g["key_cache"], g["value_cache"], 2, float(m["scale"]), g["block_tables"], g["seq_lens"],
            16, int(m["max_seq_len"]), None, "u8", 1.0, 1.0)
    ops.paged_attention_v1(out, *args, kv_layout="hnd", kv_quant=q)
    assert np.array_equal(out.view(np.uint16), g["v1.out"].view(np.uint16))
    tmp, ml, es = (np.zeros_like(g[n]) for n in ("v2.tmp_out", "v2.max_logits", "v2.exp_sums"))
    ops.paged_attention_v2(out, es, ml, tmp, *args, kv_layout="hnd", partition_size=32, kv_quant=q)
    assert np.array_equal(out.view(np.uint16), g["v2.out"].view(np.uint16))
    assert np.array_equal(tmp.view(np.uint16), g["v2.tmp_out"].view(np.uint16))
    with pytest.raises(pao.Error, match="an integer cache needs kv_quant"):
        ops.paged_attention_v1(out, *args, kv_layout="hnd")

    f = cases.make_golden(INTEGER_FUSED)
    q = _quant(f, INTEGER_FUSED, "_before")
    q = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in q.items()}
    key_cache, value_cache = f["key_cache_before"].copy(), f["value_cache_before"].copy()
    ops.reshape_and_cache(f["key"], f["value"], key_cache, value_cache, f["slot_mapping"], "i8", 1.0, 1.0,
                          kv_layout="nhd", kv_quant=q)
    for name, t in (("key_cache", key_cache), ("value_cache", value_cache), ("key_cache_scale", q["key_cache_scale"]),
                    ("value_cache_zero_point", q["value_cache_zero_point"])):
        assert np.array_equal(t.view(np.uint8), f[name].view(np.uint8)), name
    # u4 (u8 codes 0..15): the same write into a u4 golden's caches.
    u4 = dict(INTEGER_FUSED, kv_cache_dtype="u4", kv_layout="hnd", kv_quant={"key": "by_token", "rule": "openvino"})
    g4 = cases.make_golden(u4)
    q4 = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in _quant(g4, u4, "_before").items()}
    k4, v4 = g4["key_cache_before"].copy(), g4["value_cache_before"].copy()
    ops.reshape_and_cache(g4["key"], g4["value"], k4, v4, g4["slot_mapping"], "u4", 1.0, 1.0, kv_layout="hnd",
                          kv_quant=q4)
    assert np.array_equal(k4, g4["key_cache"])
    assert np.array_equal(q4["value_cache_scale"].view(np.uint8), g4["value_cache_scale"].view(np.uint8))  # NaN poison
    o = np.zeros_like(f["query"])
    ops.context_attention_fwd(f["query"], f["key"], f["value"], o, "i8", key_cache, value_cache, f["block_tables"],
                              f["query_start_loc"], f["seq_lens"], 40, 19, 1.0, 1.0, kv_layout="nhd",
                              new_kv_source="cache", kv_quant=q)
    assert np.array_equal(o.view(np.uint16), f["write_and_attend.out"].view(np.uint16))


def test_diff_and_assertion_on_real_planted_bugs(tmp_path):
    g = cases.make_golden(DECODE)
    golden = cases.write_golden(DECODE, tmp_path)
    good = {"out": g["v2.out"], "tmp_out": g["v2.tmp_out"], "max_logits": g["v2.max_logits"],
            "exp_sums": g["v2.exp_sums"]}
    report = pao.diff(golden, good, reduce=True)
    assert report.passed and bool(report)
    assert "5 passed, 0 failed" in report.text
    pao.testing.assert_paged_attention_close(good, golden, reduce=True)
    pao.testing.assert_paged_attention_close(g["v1.out"], DECODE)  # a case: its golden made on the fly

    # A real bug: the kernel run on a block table shifted by one block for sequence 2 (its last
    # logical block then reads a NaN-poisoned spare block).
    tables = g["block_tables"].copy()
    tables[2, :-1] = tables[2, 1:]
    out = np.zeros_like(g["query"])
    c = cases.load(DECODE)
    ops.paged_attention_v1(out, g["query"], g["key_cache"], g["value_cache"], 2, float(g.metadata["scale"]), tables,
                           g["seq_lens"], 16, c["max_seq_len"], None, "auto", 1.0, 1.0)
    bad = pao.diff(golden, {"out": out})
    assert not bad.passed
    (t,) = bad.tensors
    assert t["status"] == "FAIL" and "seq 2" in bad.text
    assert t["pattern"] == "nan-inf" and "at [2, " in bad.text and "seq 2" in bad.text
    json.loads(bad.to_json())
    with pytest.raises(AssertionError, match="nan-inf"):
        pao.testing.assert_paged_attention_close(out, golden)


def test_sim_run_and_sweep():
    r = pao.sim.run(device="bi-v100", kernel="v2:512", num_seqs=8, seq_lens=[8192] * 8, num_heads=32,
                    num_kv_heads=8, head_size=128, block_size=16, dtype="f16")
    assert r["time_us"] > 0 and r["kernels"][0]["ctas"] == 8 * 32 * 16
    rows = pao.sim.sweep(kernels=["v1", "v2:512"], axes=["seq-len=1024:4096:x2"], num_seqs=4, num_heads=8,
                         num_kv_heads=8, head_size=128, block_size=16, dtype="f16")
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert len(records) == 3 * 2
    assert all(float(r["time_us"]) > 0 for r in records)
    # pao's own CUDA kernels, both generations: the same CTAs as vLLM's. Under GPGPU-Sim's model the
    # kernels before #38's cuts issue more instructions than the cut ones, which issue more than the
    # model's operation count of vLLM's kernel (the factors are fitted to GPGPU-Sim's PTX counts).
    shape = dict(device="gpgpusim-v100", num_seqs=1, seq_lens=[1024], num_heads=8, num_kv_heads=2, head_size=128)
    vllm, own = pao.sim.run(kernel="v1", **shape), pao.sim.run(kernel="v1@pao-cuda", **shape)
    pre38 = pao.sim.run(kernel="v1@pao-cuda-pre38", **shape)
    assert own["kernel"] == "v1@pao-cuda" and pre38["kernel"] == "v1@pao-cuda-pre38"
    assert own["kernels"][0]["ctas"] == pre38["kernels"][0]["ctas"] == vllm["kernels"][0]["ctas"] == 8
    count = lambda r: r["kernels"][0]["warp_instructions"]
    assert count(pre38) > count(own) > count(vllm)
    assert pre38["time_us"] > own["time_us"]


def test_strided_and_zero_copy_numpy():
    g = cases.make_golden(DECODE)
    c = cases.load(DECODE)
    # Every other row of a larger buffer: a strided out, written in place.
    big = np.full((2 * 3, 4, 64), 7, dtype=np.float16)
    out = big[::2]
    query = np.ascontiguousarray(g["query"])
    ops.paged_attention_v1(out, query, g["key_cache"], g["value_cache"], 2, float(g.metadata["scale"]),
                           g["block_tables"], g["seq_lens"], 16, c["max_seq_len"], None, "auto", 1.0, 1.0)
    assert np.array_equal(out.view(np.uint16), g["v1.out"].view(np.uint16))
    assert (big[1::2] == 7).all()  # the rows between untouched
    # A strided query (a view into a wider tensor) reads the same values.
    wide = np.zeros((3, 4, 128), dtype=np.float16)
    wide[:, :, :64] = query
    out2 = np.zeros_like(query)
    ops.paged_attention_v1(out2, wide[:, :, :64], g["key_cache"], g["value_cache"], 2, float(g.metadata["scale"]),
                           g["block_tables"], g["seq_lens"], 16, c["max_seq_len"], None, "auto", 1.0, 1.0)
    assert np.array_equal(out2, out)


def test_errors_and_data_dir():
    with pytest.raises(pao.Error, match="num_heads"):
        cases.load({**DECODE, "num_heads": 3})
    with pytest.raises(pao.Error, match="unknown output group 'v9'"):
        cases.make_golden(DECODE, outputs="v9")
    ro = np.zeros((3, 4, 64), dtype=np.float16)
    ro.flags.writeable = False
    g = cases.make_golden(DECODE)
    with pytest.raises(pao.Error, match="out: a read-only numpy array"):
        ops.paged_attention_v1(ro, g["query"], g["key_cache"], g["value_cache"], 2, 0.125, g["block_tables"],
                               g["seq_lens"], 16, 230, None, "auto", 1.0, 1.0)
    assert os.path.isdir(os.path.join(pao.data_dir(), "cases"))
    assert os.path.isfile(os.path.join(pao.data_dir(), "devices", "bi-v100.json"))


def test_review_findings_read_only_inputs_vllm_names_no_half_writes():
    """Read-only inputs work (memory-mapped goldens); vLLM's exp_sum / o names are diffed, not ignored;
    a bad V2 partial is refused before anything is written; int64 index tensors are taken."""
    g = cases.make_golden(DECODE)
    c = cases.load(DECODE)
    q = g["query"].copy()
    q.flags.writeable = False
    out = np.zeros_like(q)
    args = (g["key_cache"], g["value_cache"], 2, float(g.metadata["scale"]), g["block_tables"], g["seq_lens"], 16,
            c["max_seq_len"], None, "auto", 1.0, 1.0)
    ops.paged_attention_v1(out, q, *args)
    assert np.array_equal(out.view(np.uint16), g["v1.out"].view(np.uint16))

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        golden = cases.write_golden(DECODE, tmp)
        wrong_sums = np.zeros_like(g["v2.exp_sums"])
        r = pao.diff(golden, {"out": g["v2.out"], "exp_sum": wrong_sums, "max_logits": g["v2.max_logits"],
                              "tmp_out": g["v2.tmp_out"]}, reduce=True)
        assert not r.passed  # exp_sum is vLLM's name for exp_sums: compared, and the zeros fail
        assert any(t["name"] == "v2.exp_sums" and t["status"] == "FAIL" for t in r.tensors)

    before = np.full_like(q, 3)
    tmp_out = np.zeros_like(g["v2.tmp_out"])
    with pytest.raises(pao.Error, match=r"exp_sum: shape \[2, 4, 3\]"):
        ops.paged_attention_v2(before, np.zeros((2, 4, 3), np.float32), np.zeros_like(g["v2.max_logits"]), tmp_out, q,
                               *args, partition_size=64)
    assert (before == 3).all()  # nothing written
    with pytest.raises(pao.Error, match="partition_size: 0"):
        ops.paged_attention_v2(before, g["v2.exp_sums"].copy(), g["v2.max_logits"].copy(), tmp_out, q, *args,
                               partition_size=0)

    p = cases.make_golden(PREFIX)
    o = np.zeros_like(p["query"])
    ops.context_attention_fwd(p["query"], p["key"], p["value"], o, "fp8_e4m3", p["key_cache"], p["value_cache"],
                              p["block_tables"].astype(np.int64), p["query_start_loc"].astype(np.int64),
                              p["seq_lens"], int(p.metadata["max_seq_len"]), 9, float(p.metadata["k_scale"]),
                              float(p.metadata["v_scale"]))
    assert np.array_equal(o.view(np.uint16), p["prefix.out"].view(np.uint16))

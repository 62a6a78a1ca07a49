"""Goldens written by `pao golden` load in Python the way a vendor's harness loads them (pytest).

- safetensors files load with the official `safetensors` package (numpy backend; ml_dtypes gives
  bf16 and fp8 real dtypes), with the contract's names, shapes and dtypes and the case in
  `__metadata__`;
- the values mean what the contract says: an independent numpy attention over the paged cache
  (block tables, the vLLM key layout with x, fp8 scales, ALiBi) reproduces `out_exact`, `out` is
  `out_exact` rounded, unused cache slots hold NaN;
- `--format npy` folders hold the same tensors, bf16/fp8 as raw bits declared in meta.json;
- a vendor's outputs saved with safetensors diff clean with `pao diff`, and a broken copy fails
  with the location in the JSON report.

The `pao` binary comes from $PAO_BIN, else the newest build*/[*/]tools/pao under the repository.
Needs: pip install safetensors numpy ml_dtypes pytest.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy

REPO = pathlib.Path(__file__).resolve().parents[2]

DECODE = {"num_heads": 4, "num_kv_heads": 2, "head_size": 32, "block_size": 16, "dtype": "bf16",
          "kv_cache_dtype": "fp8_e4m3", "k_scale": 0.5, "v_scale": 0.25, "alibi": True,
          "partition_size": 32, "seq_lens": [70, 5, 33], "seed": 3}
DECODE_F16 = {"num_heads": 2, "head_size": 64, "block_size": 32, "dtype": "f16", "partition_size": 64,
              "max_seq_len": 150, "num_seqs": 3, "seed": 1}
PREFIX = {"kernel": "prefix", "num_heads": 4, "num_kv_heads": 2, "head_size": 32, "dtype": "f16",
          "query_lens": [6, 1], "seq_lens": [30, 17], "seed": 2}

NUMPY_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
                "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2, "I32": np.int32}
RAW_BITS = {"bf16": ml_dtypes.bfloat16, "fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e5m2": ml_dtypes.float8_e5m2}


def patch_numpy_fp8():
    # safetensors' numpy backend looks fp8 up as numpy.float8_e4m3fn / float8_e5m2, which numpy
    # does not define; ml_dtypes has them (bf16 the backend already finds through ml_dtypes).
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(np, name):
            setattr(np, name, getattr(ml_dtypes, name))


def pao_binary():
    if os.environ.get("PAO_BIN"):
        return os.environ["PAO_BIN"]
    found = [p for p in (*REPO.glob("build*/tools/pao"), *REPO.glob("build*/*/tools/pao")) if p.is_file()]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    if not found:
        pytest.fail("no pao binary: build it (cmake --build --preset ci) or set PAO_BIN")
    return str(found[0])


def pao(*args, check=True):
    result = subprocess.run([pao_binary(), *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"pao {' '.join(map(str, args))} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


@pytest.fixture(scope="module")
def goldens(tmp_path_factory):
    """Writes the three cases as safetensors and as npy folders; returns {name: (id, dir)}."""
    root = tmp_path_factory.mktemp("goldens")
    ids = {}
    for name, case in {"decode": DECODE, "decode_f16": DECODE_F16, "prefix": PREFIX}.items():
        case_file = root / f"{name}.json"
        case_file.write_text(json.dumps(case))
        pao("golden", "--case", case_file, "--out", root / "st")
        pao("golden", "--case", case_file, "--out", root / "npy", "--format", "npy")
        ids[name] = pao("golden", "--case", case_file, "--list").stdout.strip()
    return ids, root


def load(goldens, name):
    ids, root = goldens
    path = root / "st" / f"{ids[name]}.safetensors"
    patch_numpy_fp8()
    tensors = safetensors.numpy.load_file(str(path))
    with safetensors.safe_open(str(path), framework="np") as f:
        metadata = f.metadata()
    return tensors, metadata, path


def test_manifest_lists_every_case(goldens):
    ids, root = goldens
    manifest = json.loads((root / "st" / "manifest.json").read_text())
    assert manifest["format"] == "pao-golden-manifest"
    entries = {e["id"]: e for e in manifest["cases"]}
    assert set(entries) == set(ids.values())
    for e in entries.values():
        assert (root / "st" / e["file"]).is_file()
        assert len(e["sha256"]) == 64
        assert e["parameters"]["id"] == e["id"]


def test_decode_names_shapes_dtypes_metadata(goldens):
    t, meta, _ = load(goldens, "decode")
    S, H, KV, D, B = 3, 4, 2, 32, 16
    P = -(-70 // 32)
    x = 16  # 16 bytes of fp8
    assert t["query"].shape == (S, H, D) and t["query"].dtype == ml_dtypes.bfloat16
    nb = t["key_cache"].shape[0]
    assert t["key_cache"].shape == (nb, KV, D // x, B, x)
    assert t["value_cache"].shape == (nb, KV, D, B)
    assert t["key_cache"].dtype == ml_dtypes.float8_e4m3fn
    assert t["value_cache"].dtype == ml_dtypes.float8_e4m3fn
    assert t["block_tables"].dtype == np.int32 and t["block_tables"].shape[0] == S
    assert t["seq_lens"].tolist() == [70, 5, 33]
    assert t["alibi_slopes"].shape == (H,) and t["alibi_slopes"].dtype == np.float32
    assert t["out"].shape == (S, H, D) and t["out"].dtype == ml_dtypes.bfloat16
    assert t["out_exact"].dtype == np.float64
    for name in ("v1.out", "v2.out"):
        assert t[name].shape == (S, H, D) and t[name].dtype == ml_dtypes.bfloat16
    assert t["v2.tmp_out"].shape == (S, H, P, D) and t["v2.tmp_out"].dtype == ml_dtypes.bfloat16
    assert t["v2.max_logits"].shape == (S, H, P) and t["v2.max_logits"].dtype == np.float32
    assert t["v2.exp_sums"].shape == (S, H, P) and t["v2.exp_sums"].dtype == np.float32
    case = json.loads(meta["case"])
    assert case["seq_lens"] == [70, 5, 33] and case["kv_cache_dtype"] == "fp8_e4m3"
    assert meta["fp8_format"] == "e4m3fn"
    assert float(meta["k_scale"]) == 0.5 and float(meta["v_scale"]) == 0.25
    assert np.float32(meta["scale"]) == np.float32(1 / np.sqrt(D))
    assert meta["kernel"] == "decode" and meta["seed"] == "3" and meta["pao_version"]
    assert meta["max_num_partitions"] == str(P)


def dense_decode(t, meta):
    """Independent float64 decode attention over the paged cache, as a vendor harness would gather it."""
    q = t["query"].astype(np.float64)
    S, H, D = q.shape
    kc, vc = t["key_cache"], t["value_cache"]
    KV, x, B = kc.shape[1], kc.shape[4], kc.shape[3]
    ks, vs = float(meta["k_scale"]), float(meta["v_scale"])
    scale = float(np.float32(meta["scale"]))
    slopes = t["alibi_slopes"].astype(np.float64) if "alibi_slopes" in t else None
    out = np.zeros((S, H, D))
    for s in range(S):
        n = int(t["seq_lens"][s])
        blocks = t["block_tables"][s, : -(-n // B)]
        # key_cache[b, kv, d // x, slot, d % x] -> K[token, kv, d]
        k = kc[blocks].astype(np.float64).transpose(0, 3, 1, 2, 4).reshape(len(blocks) * B, KV, D)[:n] * ks
        v = vc[blocks].astype(np.float64).transpose(0, 3, 1, 2).reshape(len(blocks) * B, KV, D)[:n] * vs
        for h in range(H):
            kv = h // (H // KV)
            logits = scale * (k[:, kv, :] @ q[s, h])
            if slopes is not None:
                logits += slopes[h] * (np.arange(n) - n + 1)
            p = np.exp(logits - logits.max())
            out[s, h] = (p / p.sum()) @ v[:, kv, :]
    return out


def test_decode_values_follow_the_contract(goldens):
    t, meta, _ = load(goldens, "decode")
    np.testing.assert_allclose(dense_decode(t, meta), t["out_exact"], rtol=1e-12, atol=1e-15)
    # out is out_exact rounded once to bf16: within half an ulp (8 significant bits).
    exact, out = t["out_exact"], t["out"].astype(np.float64)
    half_ulp = np.ldexp(1.0, np.frexp(np.abs(exact))[1] - 9)
    assert np.all(np.abs(out - exact) <= half_ulp * (1 + 1e-9))
    # Kernel precision stays close to the truth.
    assert np.abs(t["v2.out"].astype(np.float64) - exact).max() < 0.02
    # Cache slots that no sequence uses hold NaN.
    used = {int(b) for s in range(3) for b in t["block_tables"][s, : -(-int(t["seq_lens"][s]) // 16)]}
    unused = [b for b in range(t["key_cache"].shape[0]) if b not in used]
    assert unused and np.isnan(t["key_cache"][unused].astype(np.float32)).all()


def test_f16_out_is_the_rounded_exact_output(goldens):
    t, meta, _ = load(goldens, "decode_f16")
    assert t["out"].dtype == np.float16 and t["key_cache"].shape[-1] == 8  # x = 16 bytes / 2
    np.testing.assert_array_equal(t["out"], t["out_exact"].astype(np.float16))
    np.testing.assert_allclose(dense_decode(t, meta), t["out_exact"], rtol=1e-12, atol=1e-15)
    lens = json.loads(meta["case"])["seq_lens"]
    assert lens[-1] == 150 and all(1 <= n <= 150 for n in lens)


def test_prefix_names_and_shapes(goldens):
    t, meta, _ = load(goldens, "prefix")
    T = 6 + 1
    assert t["query"].shape == (T, 4, 32) and t["query"].dtype == np.float16
    assert t["key"].shape == (T, 2, 32) and t["value"].shape == (T, 2, 32)
    assert t["query_start_loc"].tolist() == [0, 6, 7]
    assert t["seq_lens"].tolist() == [30, 17]
    assert t["prefix.out"].shape == (T, 4, 32) and t["out_exact"].dtype == np.float64
    assert "v2.out" not in t
    assert meta["kernel"] == "prefix" and meta["query_lens"] == "6,1"


def test_npy_folders_match_safetensors(goldens):
    ids, root = goldens
    for name in ("decode", "prefix"):
        t, _, _ = load(goldens, name)
        folder = root / "npy" / ids[name]
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["case_id"] == ids[name]
        assert {e["name"] for e in meta["tensors"]} == set(t)
        for e in meta["tensors"]:
            a = np.load(folder / e["file"])
            if e["raw_bits"]:
                assert a.dtype == (np.uint16 if e["dtype"] == "bf16" else np.uint8)
                a = a.view(RAW_BITS[e["dtype"]])
            assert list(a.shape) == e["shape"]
            np.testing.assert_array_equal(a.view(np.uint8), t[e["name"]].view(np.uint8))


def test_pao_diff_accepts_a_correct_vendor_and_locates_a_broken_one(goldens, tmp_path):
    ids, root = goldens
    t, _, golden_path = load(goldens, "decode")
    good = tmp_path / "good.safetensors"
    safetensors.numpy.save_file({"out": t["v2.out"], "tmp_out": t["v2.tmp_out"], "max_logits": t["v2.max_logits"],
                                 "exp_sums": t["v2.exp_sums"]}, str(good))
    result = pao("diff", golden_path, good, "--reduce")
    assert result.stdout.strip().splitlines()[-1] == "5 passed, 0 failed"

    broken = t["v2.tmp_out"].copy()
    broken[2, 3, 1, :] = (broken[2, 3, 1, :].astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    bad = tmp_path / "bad.safetensors"
    safetensors.numpy.save_file({"v2.tmp_out": broken}, str(bad))
    report = tmp_path / "report.json"
    result = pao("diff", golden_path, bad, "--json", report, check=False)
    assert result.returncode == 1
    # Only a partial: it fails where it is wrong, and the absent final output fails too (never a pass).
    assert result.stdout.strip().splitlines()[-1] == (
        "0 passed, 2 failed; not compared: 2 tensor(s) ACTUAL lacks (v2.max_logits, v2.exp_sums)")
    j = json.loads(report.read_text())
    assert (j["passed"], j["failed"], j["compared"], j["not_compared"]) == (0, 2, 1, 2)
    tensor, absent = j["tensors"]
    assert absent["name"] == "out" and absent["status"] == "FAIL" and "absent from ACTUAL" in absent["problem"]
    assert tensor["name"] == "v2.tmp_out" and tensor["status"] == "FAIL"
    assert (tensor["worst"]["seq"], tensor["worst"]["head"], tensor["worst"]["partition"]) == (2, 3, 1)
    assert tensor["pattern"] == "single-block"  # partition 1 of seq 2 (33 tokens) is token 32 alone, in block 2

    assert pao("diff", golden_path, tmp_path / "missing.safetensors", check=False).returncode == 2


def run_example(script, *args):
    """An examples/ harness run as a user runs it (this python, which has torch and safetensors)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, str(REPO / "examples" / script), *map(str, args)],
                          capture_output=True, text=True, env=env)


def test_example_harnesses_refuse_what_would_lose_or_hide_a_result(goldens):
    pytest.importorskip("torch")
    ids, root = goldens
    before = {p.name: p.read_bytes() for p in (root / "st").iterdir() if p.is_file()}
    # The outputs folder is the golden folder: refused before anything is written, goldens untouched.
    r = run_example("vendor_harness.py", root / "st", root / "st", "--demo", "--pao", pao_binary())
    assert r.returncode == 2, r.stdout + r.stderr
    assert "would overwrite the goldens" in r.stderr and "Traceback" not in r.stderr
    assert {p.name: p.read_bytes() for p in (root / "st").iterdir() if p.is_file()} == before
    # IPEX's harness where IPEX is not installed: a sentence and exit 2 (bad setup), not a traceback
    # and 1 (which means a mismatch); checked before any golden is written.
    if importlib.util.find_spec("intel_extension_for_pytorch") is None:
        r = run_example("vendor_harness_ipex.py", "--goldens", root / "ipex-none", "--pao", pao_binary())
        assert r.returncode == 2, r.stdout + r.stderr
        assert "intel_extension_for_pytorch is not installed" in r.stderr and "Traceback" not in r.stderr
        assert not (root / "ipex-none").exists()


FLEX_SUITE = {
    "suite": "flex-test",
    "description": "three cases of examples/cases/flex.json: Flex's numerics (decode, prefix) and the NaN poison",
    "grids": [
        {"name": "judged", "fixed": {"kv_layout": "hnd", "poison_unused": False, "num_heads": 8, "num_kv_heads": 2},
         "axes": {"case": [
             {"kernel": "decode", "head_size": 128, "block_size": 16, "dtype": "f16", "alibi": True,
              "seq_lens": [1, 37, 130], "seed": 1},
             {"kernel": "prefix", "new_kv_source": "cache", "head_size": 64, "block_size": 32, "dtype": "bf16",
              "sliding_window": 24, "query_lens": [40, 23, 1], "seq_lens": [40, 100, 31], "seed": 2}]}},
        {"name": "poisoned", "fixed": {"kernel": "decode", "kv_layout": "hnd", "num_heads": 8, "num_kv_heads": 2,
                                       "head_size": 64, "block_size": 16, "dtype": "f32", "seq_lens": [1, 32],
                                       "seed": 1},
         "axes": {}},
    ],
}


def test_flex_harness_judges_torch_flex_attention(tmp_path):
    """examples/vendor_harness_flex.py on torch's FlexAttention + PagedAttention (the test venv's torch):
    its numerics pass on unpoisoned caches; with pao's NaN in the unused slots it fails, and pao names
    the cause: NaN in a sequence that ends on a block boundary too, so blocks no sequence owns were read
    (Flex's eager path runs P.V over every slot of the pool: 0 x NaN)."""
    pytest.importorskip("torch")
    pytest.importorskip("torch.nn.attention.experimental._paged_attention")
    suite = tmp_path / "flex-test.json"
    suite.write_text(json.dumps(FLEX_SUITE))
    common = ["--pao", pao_binary(), "--suite", suite, "--goldens", tmp_path / "g", "--outputs", tmp_path / "o"]
    judged = run_example("vendor_harness_flex.py", *common, "--cases", "*nopoison*")
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "2 pass, 0 fail, 0 not run" in judged.stdout
    poisoned = run_example("vendor_harness_flex.py", *common, "--no-generate", "--cases", "decode-h8x2-d64-b16-f32-*")
    assert poisoned.returncode == 1, poisoned.stdout + poisoned.stderr
    assert "0 pass, 1 fail" in poisoned.stdout
    assert "unused-slots" in poisoned.stdout, poisoned.stdout
    assert "blocks no sequence owns" in poisoned.stdout, poisoned.stdout  # the 32-token sequence is NaN too


def test_sdpa_harness_judges_torch_sdpa_and_a_planted_gqa_bug(tmp_path, monkeypatch):
    """examples/vendor_harness_sdpa.py: torch's scaled_dot_product_attention on each sequence's gathered blocks passes
    all three cases (the poisoned one too: the gather never reads an unused slot). The same harness with a planted
    bug computed for real -- query head h reading KV head h % kv_heads instead of h // group, the interleave a
    hand-written GQA expansion gets wrong -- fails, and pao names the case."""
    torch = pytest.importorskip("torch")
    suite = tmp_path / "flex-test.json"
    suite.write_text(json.dumps(FLEX_SUITE))
    common = ["--pao", pao_binary(), "--suite", suite, "--goldens", tmp_path / "g"]
    judged = run_example("vendor_harness_sdpa.py", *common, "--outputs", tmp_path / "o")
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "3 pass, 0 fail, 0 not run" in judged.stdout

    sys.path.insert(0, str(REPO / "examples"))
    import vendor_harness
    import vendor_harness_sdpa
    real = torch.nn.functional.scaled_dot_product_attention

    def wrong_gqa(q, k, v, enable_gqa=False, **kw):
        if enable_gqa:            # kv head h % kv_heads for query head h (should be h // group)
            group = q.shape[1] // k.shape[1]
            k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
        return real(q, k, v, **kw)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", wrong_gqa)
    bad = tmp_path / "bad"
    bad.mkdir()
    for case, tensors in vendor_harness.for_each_case(tmp_path / "g"):
        vendor_harness.write_outputs(bad, case, tensors, vendor_harness_sdpa.run_sdpa(case, tensors, torch.device("cpu")))
    r = subprocess.run([pao_binary(), "diff", str(tmp_path / "g"), str(bad), "--json", str(bad / "report.json")],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    report = json.loads((bad / "report.json").read_text())
    assert [c["status"] for c in report["cases"]] == ["FAIL"] * 3, r.stdout


OPENVINO_SUITE = {
    "suite": "openvino-test",
    "description": "cases of examples/cases/openvino.json: decode (f16, GQA, ALiBi), chunked prefill (f32, u8) and "
                   "the fused write and attention (f32, u8: the written caches judged by pao diff)",
    "grids": [
        {"name": "judged", "fixed": {"kv_layout": "hnd", "block_size": 32, "num_heads": 8, "seed": 1},
         "axes": {"case": [
             {"kernel": "decode", "num_kv_heads": 2, "head_size": 128, "dtype": "f16", "alibi": True,
              "seq_lens": [1, 37, 64, 300]},
             {"kernel": "prefix", "new_kv_source": "cache", "num_kv_heads": 8, "head_size": 64, "dtype": "f32",
              "query_lens": [40, 23, 1], "seq_lens": [40, 100, 31]},
             {"kernel": "prefix", "new_kv_source": "cache", "num_kv_heads": 2, "head_size": 64, "dtype": "f32",
              "query_lens": [40, 23, 1], "seq_lens": [40, 100, 31], "kv_cache_dtype": "u8",
              "kv_quant": {"rule": "openvino", "key": "by_token"}}]}},
        {"name": "fused", "fixed": {"kernel": "write_and_attend", "kv_layout": "hnd", "block_size": 32, "num_heads": 8,
                                    "num_kv_heads": 2, "head_size": 64, "dtype": "f32", "new_kv_source": "cache",
                                    "query_lens": [40, 23, 1], "seq_lens": [40, 100, 31], "seed": 3},
         "axes": {"cache": [{}, {"kv_cache_dtype": "u8", "kv_quant": {"rule": "openvino", "key": "by_token"}},
                            {"kv_cache_dtype": "u8", "kv_quant": {"rule": "openvino"}}]}},
    ],
}


def test_openvino_harness_judges_paged_attention_extension(tmp_path):
    """examples/vendor_harness_openvino.py on OpenVINO 2026.4.1's PagedAttentionExtension, where it is
    installed (pip install openvino==2026.4.1; not in the CI venv): the three cases pass, the new tokens'
    slots hold the golden's values (a u8 cache's codes, scales and zero points bit for bit: pao's kv_quant
    rule openvino is OpenVINO's quantiser), the f32 prefill's overwrite of the unused tail of its last
    value blocks is reported; with OpenVINO's default precision on a CPU with bf16 arithmetic the u8 case
    fails pao's bound. Without openvino: a sentence and exit 2."""
    pytest.importorskip("torch")
    suite = tmp_path / "openvino-test.json"
    suite.write_text(json.dumps(OPENVINO_SUITE))
    common = ["--pao", pao_binary(), "--suite", suite, "--goldens", tmp_path / "g", "--outputs", tmp_path / "o"]
    if importlib.util.find_spec("openvino") is None:
        r = run_example("vendor_harness_openvino.py", *common)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "this harness needs openvino==2026.4.1" in r.stderr and "Traceback" not in r.stderr
        assert not (tmp_path / "g").exists()
        return
    r = run_example("vendor_harness_openvino.py", *common, "--evidence", "--cases", "[dp]*")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 pass, 0 fail, 0 not run" in r.stdout
    # The u8 prefill: OpenVINO's written codes, scales and zero points are pao's rule openvino's, bit for bit.
    assert r.stdout.count("64 of the 64 new tokens' slots hold the golden's values with their scales and zero points") == 2
    assert "slots no token occupies were overwritten too" in r.stdout, r.stdout
    # The fused goldens: pao diff judges the caches OpenVINO wrote. The u8 codes, scales and zero points
    # pass bit for bit (by token; by channel, the blocks that held tokens requantised as pao's write
    # does); the f32 cache fails: its unused value tails were zeroed, named as such.
    r = run_example("vendor_harness_openvino.py", *common, "--no-generate", "--cases", "write_and_attend-*")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 pass, 1 fail, 0 not run" in r.stdout
    assert "out passes; value_cache: outside-slots" in r.stdout, r.stdout
    assert "all in the unused tails of the sequences' last blocks" in r.stdout, r.stdout
    # OpenVINO's own default precision on a CPU with bf16 arithmetic: the u8 case fails pao's f32 bound.
    r = run_example("vendor_harness_openvino.py", *common, "--no-generate", "--cases", "prefix-*-u8-*",
                    "--inference-precision", "default")
    bf16 = "avx512_bf16" in pathlib.Path("/proc/cpuinfo").read_text() or "amx_bf16" in pathlib.Path("/proc/cpuinfo").read_text()
    assert r.returncode == (1 if bf16 else 0), r.stdout + r.stderr

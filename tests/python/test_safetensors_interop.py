"""Interop of pao's golden files with the Python ecosystem (pytest).

pao -> Python: the sample written by pao_write_interop_sample loads with the official safetensors
package (numpy backend; ml_dtypes for bf16 and fp8) and its .npy files with numpy, with the
shapes, dtypes and values this file knows independently; the safetensors bytes are laid out as the
official writer lays them out.
Python -> pao: files written by safetensors.numpy.save_file and numpy.save read back with pao
(`--read` / `--read-npy`), and corrupted ones are rejected with exit status 2.

The sample binary comes from $PAO_INTEROP_SAMPLE (ctest sets it), else from build*/ folders.
Needs: pip install safetensors numpy ml_dtypes pytest.
"""
import hashlib
import json
import os
import pathlib
import struct
import subprocess

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy

REPO = pathlib.Path(__file__).resolve().parents[2]

# The sample's values: small integers and powers of two, exact in every format.
FLOATS = [0, 1, -2, 0.5, 3, -0.25, 8, 12]
INTS = {
    "i32": [0, 1, -2, 3, -2147483648, 2147483647, 100, -100],
    "i64": [0, 1, -2, 1 << 40, -(1 << 62), (1 << 63) - 1, 7, -7],
    "u8": [0, 1, 2, 3, 127, 128, 254, 255],
    "i8": [0, 1, -2, 3, -128, 127, 100, -100],
}
NUMPY_TYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
    "fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e5m2": ml_dtypes.float8_e5m2,
    "i32": np.int32, "i64": np.int64, "u8": np.uint8, "i8": np.int8,
}
SAFETENSORS_NAMES = {
    "f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "fp8_e4m3": "F8_E4M3", "fp8_e5m2": "F8_E5M2",
    "i32": "I32", "i64": "I64", "u8": "U8", "i8": "I8",
}
SAMPLE_METADATA = {"kernel": "decode", "seed": "7", "note": "unicode \u00e9 \u2713"}


def expected_tensors():
    """name -> numpy array of what the sample holds, built from the values above."""
    out = {}
    for name, np_type in NUMPY_TYPES.items():
        values = np.array(INTS[name], dtype=np.int64) if name in INTS else np.array(FLOATS, dtype=np.float64)
        out[name] = values.astype(np_type).reshape(2, 4)
    out["f32_transposed"] = np.ascontiguousarray(out["f32"].T)
    out["scalar"] = np.array(3.0, dtype=np.float32)
    out["empty"] = np.zeros((0, 3), dtype=ml_dtypes.bfloat16)
    return out


def safetensors_name(array):
    for name, np_type in NUMPY_TYPES.items():
        if array.dtype == np.dtype(np_type):
            return SAFETENSORS_NAMES[name]
    raise AssertionError(f"unexpected dtype {array.dtype}")


def patch_numpy_fp8():
    # safetensors' numpy backend looks fp8 dtypes up as numpy.float8_e4m3fn / float8_e5m2, which
    # numpy does not define; ml_dtypes provides them (bf16 it already finds by name).
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(np, name):
            setattr(np, name, getattr(ml_dtypes, name))


@pytest.fixture(scope="session")
def sample_binary():
    path = os.environ.get("PAO_INTEROP_SAMPLE")
    pattern = "tests/python/pao_write_interop_sample"
    found = [*REPO.glob(f"build*/{pattern}"), *REPO.glob(f"build*/*/{pattern}")]
    candidates = [pathlib.Path(path)] if path else sorted(found)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    pytest.fail("pao_write_interop_sample not found: build it (cmake --build build --target "
                "pao_write_interop_sample) or set PAO_INTEROP_SAMPLE")


@pytest.fixture(scope="session")
def sample(sample_binary, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sample")
    subprocess.run([str(sample_binary), str(folder / "sample.safetensors"), str(folder / "npy")], check=True)
    return folder


def run_json(binary, *args):
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def split_file(data):
    (n,) = struct.unpack("<Q", data[:8])
    return n, json.loads(data[8:8 + n]), data[8 + n:]


def test_pao_file_loads_with_safetensors_numpy(sample):
    patch_numpy_fp8()
    expected = expected_tensors()
    with safetensors.safe_open(str(sample / "sample.safetensors"), framework="np") as f:
        assert f.metadata() == SAMPLE_METADATA
        assert sorted(f.keys()) == sorted(expected)
        for name, want in expected.items():
            got = f.get_tensor(name)
            assert got.dtype == want.dtype, name
            assert got.shape == want.shape, name
            assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), name
            assert got.tobytes() == want.tobytes(), name


def test_pao_file_loads_with_safetensors_load(sample):
    # The bytes-level API, which needs no numpy dtype lookup at all.
    expected = expected_tensors()
    loaded = dict(safetensors.deserialize((sample / "sample.safetensors").read_bytes()))
    assert sorted(loaded) == sorted(expected)
    for name, want in expected.items():
        assert loaded[name]["dtype"] == safetensors_name(want), name
        assert list(loaded[name]["shape"]) == list(want.shape), name
        assert bytes(loaded[name]["data"]) == want.tobytes(), name


def test_pao_layout_matches_the_official_writer(sample):
    ours = (sample / "sample.safetensors").read_bytes()
    theirs = safetensors.numpy.save(expected_tensors(), metadata=SAMPLE_METADATA)
    n_ours, header_ours, data_ours = split_file(ours)
    n_theirs, header_theirs, data_theirs = split_file(theirs)
    assert n_ours % 8 == 0 and n_ours == n_theirs
    assert header_ours == header_theirs
    # Same tensor order in the JSON text and in the data (the metadata map's order is the only
    # freedom the official writer leaves: it uses a hash map).
    def tensor_order(header):
        return [k for k in header if k != "__metadata__"]

    assert tensor_order(header_ours) == tensor_order(header_theirs)
    assert data_ours == data_theirs
    assert list(header_ours)[0] == "__metadata__"
    assert list(header_ours["__metadata__"]) == sorted(SAMPLE_METADATA)


def test_pao_file_is_byte_identical_to_the_official_writer(sample_binary, tmp_path):
    # With one metadata key the official writer's output is deterministic: compare every byte
    # (JSON escaping of non-ASCII and quotes included).
    metadata = {"note": "unicode \u00e9 \u2713 \"quoted\" back\\slash"}
    ours = pathlib.Path(tmp_path) / "one_key.safetensors"
    subprocess.run([str(sample_binary), "--metadata", json.dumps(metadata), str(ours)], check=True)
    assert ours.read_bytes() == safetensors.numpy.save(expected_tensors(), metadata=metadata)


def test_pao_npy_files_load_with_numpy(sample):
    expected = expected_tensors()
    meta = json.loads((sample / "npy" / "meta.json").read_text())
    assert sorted(meta) == sorted(expected)
    for name, want in expected.items():
        path = sample / "npy" / f"{name}.npy"
        got = np.load(path)
        entry = meta[name]
        raw = entry["dtype"] in ("bf16", "fp8_e4m3", "fp8_e5m2")
        assert entry["raw_bits"] == raw, name
        assert got.dtype.str == entry["descr"], name
        if raw:
            got = got.view(NUMPY_TYPES[entry["dtype"]])
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name
        # Byte-identical to numpy.save of the same array (raw bits saved as numpy stores them).
        buffer = pathlib.Path(sample / f"{name}.numpy.npy")
        np.save(buffer, want.view(np.uint16) if entry["dtype"] == "bf16" else
                want.view(np.uint8) if raw else want)
        assert path.read_bytes() == buffer.read_bytes(), name


def official_file(tmp_path):
    tensors = {
        "query": np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8,
        "key_cache": (np.arange(32, dtype=np.float32).reshape(2, 2, 8) - 16).astype(ml_dtypes.float8_e4m3fn),
        "value_cache": (np.arange(16, dtype=np.float32) / 4).astype(ml_dtypes.float8_e5m2).reshape(4, 4),
        "out": np.linspace(-1, 1, 12).astype(ml_dtypes.bfloat16).reshape(3, 4),
        "half": np.linspace(-2, 2, 5).astype(np.float16),
        "block_tables": np.array([[3, 1], [0, 2]], dtype=np.int32),
        "ids": np.array([1 << 40, -5], dtype=np.int64),
        "exact": np.array([1 / 3], dtype=np.float64),
        "mask": np.array([0, 255, 7], dtype=np.uint8),
        "nothing": np.zeros((0,), dtype=np.float32),
    }
    path = pathlib.Path(tmp_path) / "official.safetensors"
    safetensors.numpy.save_file(tensors, str(path), metadata={"source": "safetensors.numpy", "seed": "3"})
    return path, tensors


def test_official_file_reads_with_pao(sample_binary, tmp_path):
    path, tensors = official_file(tmp_path)
    got = run_json(sample_binary, "--read", path)
    assert got["metadata"] == {"source": "safetensors.numpy", "seed": "3"}
    # pao lists tensors in file (data offset) order.
    _, header, _ = split_file(path.read_bytes())
    file_order = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"])
    assert [t["name"] for t in got["tensors"]] == file_order
    for entry in got["tensors"]:
        want = tensors[entry["name"]]
        assert entry["dtype"] == safetensors_name(want), entry["name"]
        assert entry["shape"] == list(want.shape), entry["name"]
        assert entry["sha256"] == hashlib.sha256(want.tobytes()).hexdigest(), entry["name"]


def test_pao_rejects_corrupted_official_files(sample_binary, tmp_path):
    path, _ = official_file(tmp_path)
    data = path.read_bytes()
    n, header, body = split_file(data)
    cases = {
        "truncated": (data[:-1], "beyond the end of the file"),
        "trailing": (data + b"\0", "gap"),
        "header_length": (struct.pack("<Q", len(data)) + data[8:], "beyond the end of the file"),
    }
    header["query"]["dtype"] = "F64"
    text = json.dumps(header, separators=(",", ":")).encode()
    cases["size"] = (struct.pack("<Q", len(text)) + text + body, "size != numel * dtype size")
    for name, (content, rule) in cases.items():
        bad = pathlib.Path(tmp_path) / f"{name}.safetensors"
        bad.write_bytes(content)
        done = subprocess.run([str(sample_binary), "--read", str(bad)], capture_output=True, text=True)
        assert done.returncode == 2, name
        assert str(bad) in done.stderr and rule in done.stderr, (name, done.stderr)


def test_numpy_files_read_with_pao(sample_binary, tmp_path):
    arrays = {
        "f8": np.arange(6, dtype=np.float64).reshape(2, 3) / 3,
        "f4": np.arange(4, dtype=np.float32),
        "f2": np.arange(3, dtype=np.float16),
        "i4": np.array([-1, 2], dtype=np.int32),
        "i8": np.array([[1 << 50]], dtype=np.int64),
        "u1": np.array([1, 2, 3], dtype=np.uint8),
        "scalar": np.array(2.5, dtype=np.float32),
    }
    for name, array in arrays.items():
        path = pathlib.Path(tmp_path) / f"{name}.npy"
        np.save(path, array)
        got = run_json(sample_binary, "--read-npy", path)
        assert got["shape"] == list(array.shape), name
        assert got["sha256"] == hashlib.sha256(array.tobytes()).hexdigest(), name
    raw = np.linspace(-3, 3, 7).astype(ml_dtypes.bfloat16)
    np.save(pathlib.Path(tmp_path) / "raw.npy", raw.view(np.uint16))
    got = run_json(sample_binary, "--read-npy", pathlib.Path(tmp_path) / "raw.npy", "bf16")
    assert got["dtype"] == "BF16" and got["sha256"] == hashlib.sha256(raw.tobytes()).hexdigest()
    # Version 2.0 headers, and a Fortran-ordered array (rejected).
    with open(pathlib.Path(tmp_path) / "v2.npy", "wb") as f:
        np.lib.format.write_array(f, arrays["f4"], version=(2, 0))
    assert run_json(sample_binary, "--read-npy", pathlib.Path(tmp_path) / "v2.npy")["shape"] == [4]
    np.save(pathlib.Path(tmp_path) / "fortran.npy", np.asfortranarray(arrays["f8"]))
    done = subprocess.run([str(sample_binary), "--read-npy", str(pathlib.Path(tmp_path) / "fortran.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "fortran_order True" in done.stderr

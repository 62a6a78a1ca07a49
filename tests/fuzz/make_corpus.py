#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: small valid files (from the official safetensors
writer and numpy.save, in every dtype pao reads) and small invalid ones (one broken rule each).
Usage: python3 tests/fuzz/make_corpus.py  (needs numpy, ml_dtypes, safetensors)."""
import io
import json
import pathlib
import struct

import ml_dtypes
import numpy as np
import safetensors.numpy

HERE = pathlib.Path(__file__).resolve().parent


def st_raw(header, data=b""):
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    def arr(dtype, shape):
        return (np.arange(int(np.prod(shape)), dtype=np.float32) - 2).astype(dtype).reshape(shape)

    every = {
        "f64": arr(np.float64, (2, 2)), "f32": arr(np.float32, (3,)), "f16": arr(np.float16, (1, 2)),
        "bf16": arr(ml_dtypes.bfloat16, (2,)), "e4m3": arr(ml_dtypes.float8_e4m3fn, (2,)),
        "e5m2": arr(ml_dtypes.float8_e5m2, (2,)), "i32": arr(np.int32, (2,)), "i64": arr(np.int64, (1,)),
        "u8": np.arange(3, dtype=np.uint8),
    }
    yield "valid_every_dtype", safetensors.numpy.save(every, metadata={"kernel": "decode", "seed": "7"})
    yield "valid_scalar_and_empty", safetensors.numpy.save(
        {"s": np.array(1.5, dtype=np.float32), "e": np.zeros((0, 3), np.float32)})
    yield "valid_metadata_only", st_raw({"__metadata__": {"k": "v"}})
    yield "valid_empty", st_raw({})
    f32 = struct.pack("<2f", 1.0, 2.0)
    yield "invalid_gap", st_raw({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                 "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, f32 + f32[:4])
    yield "invalid_overlap", st_raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                     "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f32)
    yield "invalid_size", st_raw({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, f32)
    yield "invalid_dtype", st_raw({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\0\1")
    yield "invalid_overflow", st_raw({"a": {"dtype": "F64", "shape": [0, 4294967296, 4294967296],
                                            "data_offsets": [0, 0]}})
    yield "invalid_metadata", st_raw({"__metadata__": {"k": 1}})
    yield "invalid_truncated", safetensors.numpy.save({"a": arr(np.float32, (4,))})[:-3]
    yield "invalid_header_length", struct.pack("<Q", 1 << 40) + b"{}"
    yield "invalid_utf8", struct.pack("<Q", 6) + b'{"\xff":1}'[:6]


def npy_bytes(a, version=None):
    out = io.BytesIO()
    if version is None:
        np.save(out, a)
    else:
        np.lib.format.write_array(out, a, version=version)
    return out.getvalue()


def npy_seeds():
    for descr, dtype in [("f8", np.float64), ("f4", np.float32), ("f2", np.float16), ("i4", np.int32),
                         ("i8", np.int64), ("u1", np.uint8), ("u2", np.uint16)]:
        yield f"valid_{descr}", npy_bytes(np.arange(6, dtype=dtype).reshape(2, 3))
    yield "valid_scalar", npy_bytes(np.array(2.0, dtype=np.float32))
    yield "valid_empty", npy_bytes(np.zeros((0, 2), np.float32))
    yield "valid_v2", npy_bytes(np.arange(3, dtype=np.float32), (2, 0))
    yield "valid_v3", npy_bytes(np.arange(3, dtype=np.int32), (3, 0))
    yield "invalid_fortran", npy_bytes(np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    yield "invalid_big_endian", npy_bytes(np.arange(3, dtype=">f4"))
    yield "invalid_complex", npy_bytes(np.arange(2, dtype=np.complex64))
    yield "invalid_truncated", npy_bytes(np.arange(8, dtype=np.float64))[:-5]
    yield "invalid_magic", b"\x93NUMPX" + npy_bytes(np.arange(2, dtype=np.float32))[6:]


def main():
    for kind, seeds in [("safetensors", safetensors_seeds()), ("npy", npy_seeds())]:
        folder = HERE / "corpus" / kind
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in seeds:
            (folder / f"{name}.{kind}").write_bytes(data)


if __name__ == "__main__":
    main()

"""Arrays in and out of pao's C++ core without copies.

A tensor goes in as a :class:`pao._pao.Buffer`: a view of the caller's memory (strides included)
with pao's dtype name beside it. bf16 and fp8, which DLPack and numpy do not carry everywhere,
travel as their raw bits (an int16 / uint8 view of the same memory). torch CPU tensors and numpy
arrays (with ml_dtypes for bf16 / fp8) are accepted.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _pao

# From the library's dtype table (pao/core/dtype.hpp): pao's dtype names by the framework dtype's
# name (torch.bfloat16 -> "bfloat16", np.float16 -> "float16"; numpy, ml_dtypes and torch agree),
# and the element sizes of the dtypes that cross as raw bits (numpy has no dtype of its own for them).
_PAO_DTYPES = {d["array_name"]: d["name"] for d in _pao.dtypes}
_ARRAY_NAMES = {d["name"]: d["array_name"] for d in _pao.dtypes}
_RAW_BITS = {d["name"]: d["bytes"] for d in _pao.dtypes if not d["numpy_native"]}


def is_torch(t: Any) -> bool:
    return type(t).__module__.split(".")[0] == "torch"


def dtype_of(t: Any) -> str:
    """pao's name for the dtype of a torch tensor or numpy array ("bf16", "fp8_e4m3", ...)."""
    name = str(t.dtype).removeprefix("torch.")
    if name not in _PAO_DTYPES:
        raise _pao.Error(f"dtype {t.dtype} is not one pao reads ({', '.join(_PAO_DTYPES)})")
    return _PAO_DTYPES[name]


def _raw(t: Any, dtype: str) -> Any:
    """`t` itself, or an integer view of the same memory for dtypes that cross as raw bits."""
    if dtype not in _RAW_BITS or dtype_of(t) == "u8":
        return t
    if is_torch(t):
        import torch
        return t.view(torch.int16 if _RAW_BITS[dtype] == 2 else torch.uint8)
    return t.view(np.uint16 if _RAW_BITS[dtype] == 2 else np.uint8)


def buffer(t: Any, name: str, dtype: str | None = None, writable: bool = False) -> _pao.Buffer:
    """A Buffer over `t` (no copy). `dtype` reads the memory as another pao dtype of the same size
    (vLLM's uint8 fp8 caches); `writable` checks that an output can be written in place."""
    if t is None:
        raise _pao.Error(f"{name}: None where a tensor is needed")
    if is_torch(t):
        if t.device.type != "cpu":
            raise _pao.Error(f"{name}: a tensor on {t.device}; pao runs on the CPU (pass {name}.cpu())")
    elif not isinstance(t, np.ndarray):
        raise _pao.Error(f"{name}: a {type(t).__name__}, expected a torch tensor or a numpy array")
    elif writable and not t.flags.writeable:
        raise _pao.Error(f"{name}: a read-only numpy array, but pao writes it in place")
    pao_dtype = dtype or dtype_of(t)
    return _pao.Buffer(_raw(t, pao_dtype), pao_dtype, name)


def from_raw(array: np.ndarray, dtype: str, like: str = "numpy") -> Any:
    """An array pao returned (raw bits for bf16 / fp8) with its real dtype: numpy (ml_dtypes for
    bf16 / fp8, when installed; else the raw bits) or torch (like="torch")."""
    if like == "torch":
        import torch
        t = torch.from_numpy(array)
        return t.view(getattr(torch, _ARRAY_NAMES[dtype])) if dtype in _RAW_BITS else t
    if dtype in _RAW_BITS:
        try:
            import ml_dtypes
        except ImportError:
            return array
        return array.view(getattr(ml_dtypes, _ARRAY_NAMES[dtype]))
    return array

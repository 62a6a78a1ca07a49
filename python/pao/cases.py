"""Cases and golden files, as ``pao golden`` makes them (docs/golden.md).

A case is a dict (or JSON text, or a path to a case JSON file) with the fields of docs/golden.md;
its tensors are seeded, so the same case gives the same bits everywhere.
"""
from __future__ import annotations

import json
import os
from typing import Any

from . import _pao
from ._tensors import from_raw

CaseLike = dict | str | os.PathLike


def _case_json(case: CaseLike) -> str:
    if isinstance(case, dict):
        return json.dumps(case)
    if isinstance(case, os.PathLike) or (isinstance(case, str) and not case.lstrip().startswith("{")):
        with open(case, encoding="utf-8") as f:
            return f.read()
    return case


def fields() -> list[dict]:
    """Every field a case may hold, from the library's case schema (docs/golden.md's table): dicts of
    name, type, group, kinds (who takes it), default and doc, in the order the parser reads them."""
    return [dict(f) for f in _pao.case_fields]


def load(case: CaseLike) -> dict:
    """The case with every default filled in, its lengths resolved and its id made."""
    return json.loads(_pao.canonical_case(_case_json(case)))


def describe(case: CaseLike) -> str:
    """One line: "decode, 3 seqs (longest 300), heads 4/4, head_size 128, ..."."""
    return _pao.describe_case(_case_json(case))


class Golden:
    """A golden's tensors (``.tensors``: name -> array) and ``.metadata`` (``__metadata__``)."""

    def __init__(self, tensors: dict[str, Any], metadata: dict[str, str]) -> None:
        self.tensors = tensors
        self.metadata = metadata

    @property
    def case(self) -> dict:
        return json.loads(self.metadata["case"])

    def __getitem__(self, name: str) -> Any:
        return self.tensors[name]

    def __repr__(self) -> str:
        return f"Golden({self.metadata.get('case_id', '?')}: {', '.join(self.tensors)})"


def _golden(named: list, metadata: dict[str, str], like: str) -> Golden:
    return Golden({name: from_raw(array, dtype, like) for name, dtype, array in named}, metadata)


def make_golden(case: CaseLike, outputs: str = "all", like: str = "numpy") -> Golden:
    """The case's golden, in memory: seeded inputs and the oracle's outputs (``outputs`` as
    ``pao golden --outputs``). ``like="torch"`` returns torch tensors (no copy)."""
    named, metadata = _pao.golden_tensors(_case_json(case), outputs)
    return _golden(named, metadata, like)


def read_golden(path: str | os.PathLike, like: str = "numpy", complete: bool = True) -> Golden:
    """A golden file (safetensors or npy folder); outputs it leaves out are recomputed unless
    ``complete=False``."""
    named, metadata = _pao.read_golden(os.fspath(path), complete)
    return _golden(named, metadata, like)


def write_golden(case: CaseLike, directory: str | os.PathLike, format: str = "safetensors",
                 outputs: str = "all") -> str:
    """Writes the case's golden into ``directory`` (as ``pao golden --case``, without a manifest);
    returns the file's path."""
    os.makedirs(directory, exist_ok=True)
    return _pao.write_golden(_case_json(case), os.fspath(directory), format, outputs)


def outputs(case: CaseLike, precision: str = "kernel", like: str = "numpy") -> dict[str, Any]:
    """The case's kernel outputs in one precision ("kernel" or "exact"): decode ``v1.out``, ``v2.out``
    and V2's partials; prefix ``prefix.out``; reshape_and_cache the written caches."""
    return {name: from_raw(array, dtype, like) for name, dtype, array in
            _pao.case_outputs(_case_json(case), precision)}

"""The timing simulator from Python: ``pao sim run`` and ``pao sim sweep`` (docs/simulator.md).

The workload is a case's fields as keywords (``num_seqs``, ``seq_lens``, ``num_heads``,
``num_kv_heads``, ``head_size``, ``block_size``, ``dtype``, ``kernel="prefix"`` with
``query_lens``, ...), or ``case=`` a case dict / JSON / file.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from . import _pao
from .cases import CaseLike, _case_json


def _workload(case: CaseLike | None, fields: dict[str, Any]) -> str:
    """A case's JSON. Keywords are case fields, plus ``seq_len`` (every sequence's length); what they
    leave out is ``pao sim run``'s default: 8 sequences of 4096 tokens, 32 heads (as many KV heads),
    head size 128, blocks of 16, f16."""
    if case is not None and fields:
        raise _pao.Error("give the workload either as case= or as keywords, not both")
    if case is not None:
        return _case_json(case)
    fields = {**_DEFAULTS, **fields}
    seq_len = fields.pop("seq_len", 4096)
    if "seq_lens" not in fields and "max_seq_len" not in fields:
        fields["seq_lens"] = [seq_len] * fields["num_seqs"]
    return json.dumps(fields)


# `pao sim run`'s defaults for what the keywords leave out.
_DEFAULTS = {"num_seqs": 8, "num_heads": 32, "head_size": 128, "block_size": 16, "dtype": "f16"}


def run(device: str = "bi-v100", kernel: str = "v2:512", case: CaseLike | None = None, **workload: Any) -> dict:
    """One simulated launch sequence: ``pao sim run --json``'s result (time_us, dram_bytes, per-kernel
    CTAs, waves, occupancy limiter, ...). ``kernel``: v1, v2[:partition], fallback[:partition], prefix."""
    return json.loads(_pao.sim_run(device, kernel, _workload(case, workload)))


def sweep(device: str = "bi-v100", kernels: tuple[str, ...] | list[str] = ("v1", "v2:512"),
          axes: tuple[str, ...] | list[str] = ("seq-len=512:65536:x2",), case: CaseLike | None = None,
          **workload: Any) -> Any:
    """``pao sim sweep``: one row per (axis values, kernel). A pandas DataFrame when pandas is
    installed, else a list of dicts (numbers as floats)."""
    text = _pao.sim_sweep(device, list(kernels), _workload(case, workload), list(axes))
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        for k, v in row.items():
            try:
                row[k] = float(v)
            except (TypeError, ValueError):
                pass
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)

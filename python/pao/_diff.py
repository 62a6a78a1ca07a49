"""``pao.diff``: a vendor's outputs against a golden, with ``pao diff``'s verdicts (docs/golden.md)."""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from . import _pao
from ._tensors import buffer


class Report:
    """What ``pao diff`` found: ``.passed``; ``.cases``; ``.tensors`` (``name``, ``status``,
    ``max_abs_error``, ``threshold``, ``rule``, the worst elements' locations in the paged structure,
    ``pattern``); ``.text`` (the report ``pao diff`` prints); ``.to_json()`` (``pao diff --json``)."""

    def __init__(self, passed: bool, json_text: str, text: str) -> None:
        self.passed = passed
        self.json = json.loads(json_text)
        self.text = text

    @property
    def cases(self) -> list[dict]:
        """Per case: case_id, status, description, golden, actual, passed, failed, notes."""
        return self.json["cases"]

    @property
    def tensors(self) -> list[dict]:
        """Per tensor compared (each with its case_id): name, status, rule, threshold, criteria,
        max_abs_error, worst elements with their locations, pattern, per-sequence / head /
        partition summaries."""
        return self.json["tensors"]

    def to_json(self) -> str:
        return json.dumps(self.json, indent=2)

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"Report(passed={self.passed}: {self.text.strip().splitlines()[-1]})"


def _policies(policy: str | list[str] | None) -> list[str]:
    if policy is None:
        return []
    return [policy] if isinstance(policy, str) else list(policy)


def diff(golden: str | os.PathLike, actual: str | os.PathLike | dict[str, Any], policy: str | list[str] | None = None,
         *, reduce: bool = False, cases: str = "", allow_missing: bool = False,
         allow_dtype_mismatch: bool = False, verbose: bool = False) -> Report:
    """``pao diff GOLDEN ACTUAL``. ``golden``: a golden file or folder. ``actual``: a file or folder of
    the vendor's outputs, or a dict of tensors (``{"out": ..., "tmp_out": ...}``; vLLM's names work:
    ``tmp_out``, ``max_logits``, ``exp_sums`` or paged_attention_v2's ``exp_sum``, context_attention_fwd's ``o``).
    ``policy``: ``--policy`` overrides ("out:k=3"); ``reduce``, ``cases``, ``allow_missing``,
    ``allow_dtype_mismatch``, ``verbose``: as the flags of ``pao diff``."""
    if isinstance(actual, dict):
        with tempfile.TemporaryDirectory(prefix="pao-diff-") as tmp:
            path = os.path.join(tmp, "actual.safetensors")
            _pao.write_tensors(path, [buffer(t, name) for name, t in actual.items()], {})
            return diff(golden, path, policy, reduce=reduce, cases=cases, allow_missing=allow_missing,
                        allow_dtype_mismatch=allow_dtype_mismatch, verbose=verbose)
    return Report(*_pao.diff(os.fspath(golden), os.fspath(actual), reduce, _policies(policy), cases, allow_missing,
                             allow_dtype_mismatch, verbose))
